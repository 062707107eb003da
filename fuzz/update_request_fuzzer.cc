// Fuzz target: an update request body (spool/rewind/update_request.h), as
// the CLI's --json and the server's POST .../updates take it, and a rewind
// timestamp. Oracle, beyond "no crash, no hang, no undefined behaviour": a
// refused body is InvalidArgument with a message and leaves the request
// alone; an accepted one prints as JSON that parses back to the same
// request; a timestamp is accepted only in the reference form.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "spool/rewind/update_request.h"

namespace {

void Check(bool ok, const char* what, std::string_view input) {
  if (!ok) {
    std::fprintf(stderr, "update_request_fuzzer: invariant violated: %s\ninput: %.*s\n", what,
                 static_cast<int>(input.size()), input.data());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  spool::UpdateRequest request;
  request.validate_only = true;  // a marker a refused body must not touch
  const spool::Status s = spool::ParseUpdateRequest(input, &request);
  if (!s.ok()) {
    Check(s.IsInvalidArgument() && !s.message().empty(), "a refusal is InvalidArgument with a message", input);
    Check(request.validate_only && !request.full_refresh && !request.rewind_spec, "a refused body changed nothing",
          input);
  } else {
    spool::UpdateRequest again;
    Check(spool::ParseUpdateRequest(spool::UpdateRequestToJson(request), &again).ok(), "the printed body parses",
          input);
    Check(again == request, "the printed body reads back equal", input);
  }
  int64_t micros = 0;
  if (spool::ParseRewindTimestamp(input, &micros).ok()) {
    Check(input.size() == 19 && input[4] == '-' && input[10] == ' ' && input[13] == ':',
          "an accepted timestamp has the form yyyy-MM-dd HH:mm:ss", input);
  }
  return 0;
}
