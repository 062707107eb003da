// The HTTP API's answers (api_service.h): JSON bodies, and errors as
// {"error_code", "message"} with their status. Internal to the API's files.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "api_service.h"
#include "json_text.h"
#include "spool/rewind/update_request.h"

namespace spool::cli {

using ApiJson = nlohmann::ordered_json;

// Responses are JsonText: requests may carry bytes that are not UTF-8 (a
// path, a field a message quotes back).
inline ApiResponse ApiError(int status, std::string_view code, std::string_view message) {
  return {status, JsonText(ApiJson{{"error_code", code}, {"message", message}})};
}
inline ApiResponse ApiOk(const ApiJson& body) { return {200, JsonText(body)}; }

// A refused request's response: its code and the status for it.
inline ApiResponse ApiFromStatus(const Status& s) {
  const std::string message(s.message());
  if (std::string_view code = ErrorCode(s); !code.empty()) return ApiError(400, code, message);
  if (s.IsInvalidArgument()) return ApiError(400, "INVALID_PARAMETER_VALUE", message);
  if (s.IsNotFound()) return ApiError(404, "RESOURCE_DOES_NOT_EXIST", message);
  if (s.IsBusy()) return ApiError(409, "RESOURCE_CONFLICT", message);
  if (s.IsFailed()) return ApiError(409, "INVALID_STATE", message);
  return ApiError(500, "INTERNAL_ERROR", message);
}

// POST /api/2.0/sql/statements (api_sql.cc).
ApiResponse SqlStatement(Store* store, const std::string& body);

}  // namespace spool::cli
