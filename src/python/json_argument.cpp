#include "json_argument.hpp"

#include "errors.hpp"

namespace tunekit::python {

nlohmann::json parse_json(const std::string& text, const char* what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    raise_value_error(std::string(what) + " is not JSON: " + text);
  }
}

}  // namespace tunekit::python
