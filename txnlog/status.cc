#include "spool/txnlog/status.h"

namespace spool {

Status::Status(Code code, std::string_view msg)
    : code_(code), message_(msg.empty() ? nullptr : std::make_unique<const std::string>(msg)) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    code_ = other.code_;
    message_ = other.message_ ? std::make_unique<const std::string>(*other.message_) : nullptr;
  }
  return *this;
}

std::string_view Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      return "NotFound";
    case Code::kCorruption:
      return "Corruption";
    case Code::kInvalidArgument:
      return "InvalidArgument";
    case Code::kIOError:
      return "IOError";
    case Code::kNoSpace:
      return "NoSpace";
    case Code::kFailed:
      return "Failed";
    case Code::kBusy:
      return "Busy";
    case Code::kAborted:
      return "Aborted";
    case Code::kNotSupported:
      return "NotSupported";
    case Code::kOutOfRange:
      return "OutOfRange";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  std::string out(CodeName(code_));
  if (message_) {
    out += ": ";
    out += *message_;
  }
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return Status();
  std::string msg(context);
  if (message_) {
    msg += ": ";
    msg += *message_;
  }
  return Status(code_, msg);
}

}  // namespace spool
