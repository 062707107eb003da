// Status: the outcome of an operation that can fail for reasons outside the
// program's control (bad bytes, I/O errors, a user's mistake). Invariants
// inside Spool are asserted, never reported as a Status.
//
// A Status is cheap when OK (no allocation) and cannot be silently dropped:
// the class is [[nodiscard]]. Thread-safety: distinct objects may be used
// from distinct threads; const methods may be called concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace spool {

class [[nodiscard]] Status {
 public:
  // Each code names one kind of failure; an embedder can branch on it.
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,         // a named thing (file, version, point) does not exist
    kCorruption,       // stored bytes are not what Spool wrote
    kInvalidArgument,  // the caller's input is malformed or out of range
    kIOError,          // the operating system reported an I/O failure
    kNoSpace,          // the device is full
    kFailed,           // the handle is poisoned by an earlier fatal error
    kBusy,             // another process or operation holds what is needed
    kAborted,          // the operation was interrupted (e.g. a simulated crash)
    kNotSupported,
    kOutOfRange,  // a position that once existed is no longer retained
  };

  Status() noexcept = default;
  Status(const Status& other) : Status(other.code_, other.message()) {}
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status InvalidArgument(std::string_view msg) { return Status(Code::kInvalidArgument, msg); }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg); }
  static Status NoSpace(std::string_view msg) { return Status(Code::kNoSpace, msg); }
  static Status Failed(std::string_view msg) { return Status(Code::kFailed, msg); }
  static Status Busy(std::string_view msg) { return Status(Code::kBusy, msg); }
  static Status Aborted(std::string_view msg) { return Status(Code::kAborted, msg); }
  static Status NotSupported(std::string_view msg) { return Status(Code::kNotSupported, msg); }
  static Status OutOfRange(std::string_view msg) { return Status(Code::kOutOfRange, msg); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }
  bool IsFailed() const { return code_ == Code::kFailed; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsAborted() const { return code_ == Code::kAborted; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsOutOfRange() const { return code_ == Code::kOutOfRange; }

  // The message alone, without the code's name.
  std::string_view message() const { return message_ ? std::string_view(*message_) : std::string_view(); }
  // "Corruption: segment 000003.seg offset 4096: checksum mismatch".
  std::string ToString() const;
  static std::string_view CodeName(Code code);

  // Returns a copy whose message is prefixed with `context` and ": ".
  Status WithContext(std::string_view context) const;

 private:
  Status(Code code, std::string_view msg);

  Code code_ = Code::kOk;
  std::unique_ptr<const std::string> message_;
};

// Evaluates `expr` (a Status) and returns it from the enclosing function if
// it is not OK.
#define SPOOL_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::spool::Status spool_status_ = (expr);        \
    if (!spool_status_.ok()) return spool_status_; \
  } while (0)

}  // namespace spool
