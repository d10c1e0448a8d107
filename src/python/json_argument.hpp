// JSON text handed over from the Python side (specs and configuration spaces composed in Python).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tunekit::python {

/// `text` parsed as JSON. Errors: raises tunekit.InvalidArgumentError (a ValueError) naming
/// `what` and quoting the text when it is not JSON.
nlohmann::json parse_json(const std::string& text, const char* what);

}  // namespace tunekit::python
