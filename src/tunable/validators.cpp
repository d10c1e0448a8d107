// Validator registry and whole-file validation.
// See include/tunekit/tunable/validators.hpp.
#include "tunekit/tunable/validators.hpp"

#include <algorithm>

namespace tunekit {
namespace {

bool valid_key(std::string_view key) {
  if (key.empty() || key == "Validator") return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string ValidatorRegistry::sanitize_value(std::string value) {
  for (char& c : value) {
    if (c == ',') c = ';';
    if (c == '\r' || c == '\n') c = ' ';
  }
  if (value.empty()) value = "unknown";
  return value;
}

Status ValidatorRegistry::register_validator(std::string key, Getter getter) {
  if (!valid_key(key)) {
    return Status(StatusCode::kInvalidArgument,
                  "validator key '" + key + "' must be a non-empty upper-case word [A-Z0-9_]");
  }
  if (!getter) {
    return Status(StatusCode::kInvalidArgument, "validator " + key + " has no value getter");
  }
  std::lock_guard lock(mutex_);
  for (Item& item : items_) {
    if (item.key == key) {
      item.getter = std::move(getter);
      return Status::ok();
    }
  }
  items_.push_back(Item{std::move(key), std::move(getter)});
  return Status::ok();
}

bool ValidatorRegistry::unregister_validator(std::string_view key) {
  if (key == kVersionValidator) return false;
  std::lock_guard lock(mutex_);
  auto it = std::find_if(items_.begin(), items_.end(), [&](const Item& i) { return i.key == key; });
  if (it == items_.end()) return false;
  items_.erase(it);
  return true;
}

bool ValidatorRegistry::contains(std::string_view key) const {
  std::lock_guard lock(mutex_);
  return std::any_of(items_.begin(), items_.end(), [&](const Item& i) { return i.key == key; });
}

std::vector<std::string> ValidatorRegistry::keys() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const Item& i : items_) out.push_back(i.key);
  return out;
}

std::vector<ValidatorEntry> ValidatorRegistry::values() const {
  std::vector<Item> items;
  {
    std::lock_guard lock(mutex_);
    items = items_;
  }
  std::vector<ValidatorEntry> out;
  out.reserve(items.size());
  for (const Item& i : items) out.emplace_back(i.key, sanitize_value(i.getter()));
  return out;
}

void ValidatorRegistry::clear() {
  std::lock_guard lock(mutex_);
  items_.clear();
}

Status ValidatorRegistry::validate(const std::vector<ValidatorEntry>& file_validators,
                                   std::string_view file) const {
  const std::string name(file);
  const auto mine = values();
  auto find = [](const std::vector<ValidatorEntry>& v,
                 std::string_view key) -> const ValidatorEntry* {
    for (const auto& e : v) {
      if (e.first == key) return &e;
    }
    return nullptr;
  };
  const std::string advice =
      " (the file was written under another environment; it is neither loaded nor appended to. "
      "Tune again with another file name, or move the file away)";
  if (find(file_validators, kVersionValidator) == nullptr) {
    return Status(StatusCode::kValidatorMismatch,
                  name + ": key=\"" + std::string(kVersionValidator) +
                      "\" is not provided for validation; the file is not a tunekit results file "
                      "or its header is damaged" +
                      advice);
  }
  for (const auto& [key, value] : mine) {
    const ValidatorEntry* theirs = find(file_validators, key);
    if (theirs == nullptr) {
      return Status(StatusCode::kValidatorMismatch,
                    name + ": Unmatched validator: this machine has " + key + "='" + value +
                        "' but the file has no " + key + " line" + advice);
    }
    if (theirs->second != value) {
      return Status(StatusCode::kValidatorMismatch,
                    name + ": validator " + key + " differs: file has '" + theirs->second +
                        "', this machine has '" + value + "'" + advice);
    }
  }
  for (const auto& [key, value] : file_validators) {
    if (find(mine, key) == nullptr) {
      return Status(StatusCode::kValidatorMismatch,
                    name + ": Unmatched validator: the file has " + key + "='" + value +
                        "' but this machine registers no " + key + advice);
    }
  }
  return Status::ok();
}

}  // namespace tunekit
