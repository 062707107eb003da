// How the rewind layer refuses a request. Internal to rewind.
#pragma once

#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool {

// A refused request's error: its code (an update_error:: or rewind_error::
// one), then ": " and what to do, as ErrorCode reads it back.
inline Status Refuse(std::string_view code, const std::string& what) {
  return Status::InvalidArgument(std::string(code) + ": " + what);
}

}  // namespace spool
