// Fuzz target: the bytes of a topic (stream/topic_format.h): a log record's
// body and the TOPIC file. Oracle, beyond "no crash, no hang, no undefined
// behaviour": a refused body or file is Corruption; an accepted body holds
// exactly `count` messages whose bytes fill it, and encoding them again
// gives the same bytes; an accepted TOPIC file encodes to one that parses
// to the same settings.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "topic_format.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "topic_record_fuzzer: invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckRecord(std::string_view body) {
  namespace fmt = spool::topicfmt;
  fmt::RecordHeader header;
  std::vector<fmt::MessageView> messages;
  const spool::Status s = fmt::DecodeRecord(body, &header, &messages);
  Check(s.ok() || s.IsCorruption(), "a refused body is Corruption");
  if (!s.ok()) return;
  Check(messages.size() == header.count, "an accepted body holds count messages");
  fmt::RecordHeader parsed;
  Check(fmt::ParseRecordHeader(body, &parsed).ok() && parsed.base_offset == header.base_offset &&
            parsed.count == header.count,
        "the header alone parses the same");
  std::vector<spool::TopicWrite> writes;
  for (const fmt::MessageView& m : messages) writes.push_back(spool::TopicWrite{m.key, m.value});
  std::string again;
  fmt::PutRecordHeader(header, &again);
  fmt::PutMessages(writes, &again);
  Check(again == body, "an accepted body encodes to the same bytes");
}

void CheckConfig(std::string_view text) {
  namespace fmt = spool::topicfmt;
  spool::TopicConfig config;
  const spool::Status s = fmt::ParseConfig(text, &config);
  Check(s.ok() || s.IsCorruption(), "a refused TOPIC file is Corruption");
  if (!s.ok()) return;
  spool::TopicConfig again;
  Check(fmt::ParseConfig(fmt::EncodeConfig(config), &again).ok() && again == config,
        "an accepted TOPIC file round-trips");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  CheckRecord(bytes);
  CheckConfig(bytes);
  return 0;
}
