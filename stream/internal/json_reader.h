// A strict reader of JSON objects for the documents Spool takes (pipeline
// specs, update requests). Internal (not installed): for the .cc files of
// stream/ and rewind/ that parse them (spool_stream_internal).
#pragma once

#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "spool/stream/records.h"
#include "spool/txnlog/status.h"

namespace spool {

using json = nlohmann::ordered_json;

// Parses `text` as nlohmann does (`*out` is discarded when it is not
// JSON), and sets `*duplicate` to the first key that one object names
// twice: nlohmann would keep the last value silently, so that
// {"validate_only": true, "validate_only": false} would mean false.
inline void ParseJsonKeysOnce(std::string_view text, json* out, std::string* duplicate) {
  std::vector<std::set<std::string>> open;  // the keys of each object being parsed
  duplicate->clear();
  json::parser_callback_t callback = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == json::parse_event_t::key && !open.empty() && !open.back().insert(parsed.get<std::string>()).second &&
        duplicate->empty()) {
      *duplicate = parsed.get<std::string>();
    }
    return true;
  };
  *out = json::parse(text, callback, /*allow_exceptions=*/false);
}

// Reads one JSON object, refusing keys it does not know: a misspelt option
// is an error, not a silent default. Errors name the place in the document
// ("flows[0] \"ingest\".steps[1].filter: ...").
class Reader {
 public:
  Reader(const json& j, std::string place) : j_(j), place_(std::move(place)) {}

  const std::string& place() const { return place_; }
  Status Error(std::string_view what) const { return Status::InvalidArgument(place_ + ": " + std::string(what)); }
  Status FieldError(std::string_view key, std::string_view what) const {
    return Status::InvalidArgument(place_ + "." + std::string(key) + ": " + std::string(what));
  }
  bool Has(std::string_view key) const { return j_.contains(key); }
  std::string Sub(std::string_view key) const { return place_ + "." + std::string(key); }
  const json& At(std::string_view key) const { return j_.at(key); }

  Status CheckObject(std::initializer_list<std::string_view> keys) const {
    if (!j_.is_object()) return Error("expected a JSON object, got " + std::string(j_.type_name()));
    for (const auto& [key, value] : j_.items()) {
      bool known = false;
      for (std::string_view k : keys) known = known || k == key;
      if (!known) {
        std::string list;
        for (std::string_view k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
        return Error("unknown field '" + key + "' (known: " + list + ")");
      }
    }
    return Status::OK();
  }

  Status String(std::string_view key, std::string* out, bool required) const {
    if (!Has(key)) return required ? FieldError(key, "missing") : Status::OK();
    if (!At(key).is_string()) return FieldError(key, "expected a string");
    *out = At(key).get<std::string>();
    if (required && out->empty()) return FieldError(key, "must not be empty");
    return Status::OK();
  }
  Status Bool(std::string_view key, bool* out) const {
    if (!Has(key)) return Status::OK();
    if (!At(key).is_boolean()) return FieldError(key, "expected true or false");
    *out = At(key).get<bool>();
    return Status::OK();
  }
  Status Count(std::string_view key, uint64_t* out) const {
    if (!Has(key)) return Status::OK();
    if (!At(key).is_number_unsigned()) return FieldError(key, "expected a non-negative integer");
    *out = At(key).get<uint64_t>();
    return Status::OK();
  }
  Status Strings(std::string_view key, std::vector<std::string>* out, bool required) const {
    if (!Has(key)) return required ? FieldError(key, "missing") : Status::OK();
    const json& list = At(key);
    if (!list.is_array()) return FieldError(key, "expected a list of strings");
    out->clear();
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string() || list[i].get<std::string>().empty()) {
        return Status::InvalidArgument(Sub(key) + "[" + std::to_string(i) + "]: expected a non-empty string");
      }
      out->push_back(list[i].get<std::string>());
    }
    if (required && out->empty()) return FieldError(key, "must not be empty");
    return Status::OK();
  }
  Status StringMap(std::string_view key, std::map<std::string, std::string>* out) const {
    if (!Has(key)) return Status::OK();
    const json& object = At(key);
    if (!object.is_object()) return FieldError(key, "expected an object of strings");
    for (const auto& [name, value] : object.items()) {
      if (!value.is_string()) return FieldError(std::string(key) + "." + name, "expected a string");
      (*out)[name] = value.get<std::string>();
    }
    return Status::OK();
  }
  Status Duration(std::string_view key, uint64_t* out, bool required) const {
    std::string text;
    SPOOL_RETURN_IF_ERROR(String(key, &text, required));
    if (text.empty()) return Status::OK();
    Status s = ParseDuration(text, out);
    if (!s.ok()) return FieldError(key, s.message());
    return Status::OK();
  }

 private:
  const json& j_;
  std::string place_;
};

}  // namespace spool
