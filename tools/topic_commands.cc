// `spool topic create | produce | consume | info | retention`: the durable
// topic of docs/architecture.md (spool/stream/topic.h).
#include <sys/statvfs.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "commands.h"
#include "json_text.h"
#include "spool/stream/records.h"
#include "spool/stream/topic.h"

namespace spool::cli {
namespace {

using nlohmann::ordered_json;

// Lines of stdin go to the topic in durable batches of at most this many.
constexpr size_t kStdinBatchMessages = 10'000;
static_assert(kStdinBatchMessages <= kMaxTopicBatchMessages);

Status OpenTopic(const std::string& dir, std::unique_ptr<Topic>* topic) {
  Status s = Topic::Open(Env::Default(), dir, topic);
  if (s.IsNotFound()) return WithHint(s, "create one with `spool topic create " + dir + "`");
  if (s.IsBusy()) return WithHint(s, "another spool command or program is using it: try again when it is done");
  return s;
}

// "7d", "36h", "90m", "15s", "500ms": the largest unit that divides it, as
// ParseDuration reads it back.
std::string FormatDuration(uint64_t micros) {
  static constexpr std::pair<const char*, uint64_t> kUnits[] = {
      {"d", 86'400'000'000ull}, {"h", 3'600'000'000ull}, {"m", 60'000'000ull}, {"s", 1'000'000ull}, {"ms", 1'000ull}};
  for (const auto& [unit, scale] : kUnits) {
    if (micros % scale == 0) return fmt::format("{}{}", micros / scale, unit);
  }
  return fmt::format("{}us", micros);
}

std::string RetentionText(const TopicRetention& r) {
  return fmt::format("age {}, size {}", r.age_us == 0 ? "unlimited" : FormatDuration(r.age_us),
                     r.bytes == 0 ? "unlimited" : FormatBytes(r.bytes));
}

// "name": text when it is UTF-8, else "name_base64": its base64.
void PutBytes(ordered_json* out, const std::string& name, const std::string& bytes) {
  if (IsUtf8(bytes)) {
    (*out)[name] = bytes;
  } else {
    (*out)[name + "_base64"] = EncodeBase64(bytes);
  }
}

// CLI11 reads "-1" into a uint64_t as 2^64 - 1: only digits pass.
CLI::Validator WholeNumber() {
  return CLI::Validator(
      [](const std::string& text) {
        const bool digits =
            !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
        return digits ? std::string() : "'" + text + "' is not a whole number (0 or more)";
      },
      "UINT");
}

// ---------------------------------------------------------------------------
// create

struct TopicCreateArgs {
  std::string dir;
  std::string retention = "7d";
  uint64_t retention_bytes = 0;
  uint64_t segment_bytes = kDefaultTopicSegmentBytes;
};

int RunTopicCreate(const TopicCreateArgs& args) {
  TopicConfig config;
  Status s = ParseDuration(args.retention, &config.retention.age_us);
  config.retention.bytes = args.retention_bytes;
  config.segment_size_bytes = args.segment_bytes;
  if (s.ok()) s = Topic::Create(Env::Default(), args.dir, config);
  if (!s.ok()) return ReportError(s);
  std::cout << fmt::format("created topic {} (retention: {}; segments of {})\n", args.dir,
                           RetentionText(config.retention), FormatBytes(config.segment_size_bytes));
  return kExitOk;
}

// ---------------------------------------------------------------------------
// produce

struct ProduceArgs {
  std::string dir;
  std::string key;
  std::vector<std::string> messages;
  std::string file;   // one message a line, instead of stdin
  uint64_t skip = 0;  // the first this many messages are left out (a retry's)
};

// Refuses, before anything is written, messages the topic's file system
// has no room for: so that a full disk leaves the topic as it was rather
// than holding part of them. (A write can still fail on a disk that fills
// meanwhile; RunProduce then says exactly what was stored.)
Status CheckRoom(const std::string& dir, const std::vector<std::vector<TopicWrite>>& batches) {
  constexpr uint64_t kPerMessage = 16, kSlack = 1ull << 20;  // record framing; a segment's zero-filled start
  uint64_t needed = kSlack;
  for (const auto& batch : batches) needed += TopicBatchBytes(batch) + kPerMessage * batch.size();
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return Status::OK();  // not known: the writes will say
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes >= needed) return Status::OK();
  return Status::NoSpace(
      fmt::format("no space left on the file system of {}: the messages need about {}, {} is free; "
                  "nothing was produced",
                  dir, FormatBytes(needed), FormatBytes(free_bytes)));
}

// Splits `values` into batches within the topic's limits. Errors:
// InvalidArgument naming the message (its stdin line) too large for any batch.
Status SplitBatches(const std::string& key, const std::vector<std::string>& values,
                    std::vector<std::vector<TopicWrite>>* batches) {
  const uint64_t header_bytes = TopicBatchBytes({});
  uint64_t bytes = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const TopicWrite write{key, values[i]};
    const uint64_t message_bytes = TopicBatchBytes(std::span(&write, 1)) - header_bytes;
    if (header_bytes + message_bytes > kMaxTopicBatchBytes) {
      return Status::InvalidArgument(fmt::format("message {} takes {} bytes, over the batch limit of {}", i + 1,
                                                 header_bytes + message_bytes, kMaxTopicBatchBytes));
    }
    if (batches->empty() || batches->back().size() == kStdinBatchMessages ||
        bytes + message_bytes > kMaxTopicBatchBytes) {
      batches->emplace_back();
      bytes = header_bytes;
    }
    batches->back().push_back(write);
    bytes += message_bytes;
  }
  return Status::OK();
}

// The messages of `in`, one a line, each at most kMaxRecordLineBytes (an
// input without newlines is refused at that bound, not buffered whole).
Status ReadLines(std::istream& in, const std::string& source, std::vector<std::string>* lines) {
  std::string line;
  bool too_long = false;
  while (ReadBoundedLine(in, kMaxRecordLineBytes, &line, &too_long)) {
    if (too_long) {
      return Status::InvalidArgument(source + " line " + std::to_string(lines->size() + 1) + " is longer than " +
                                     std::to_string(kMaxRecordLineBytes >> 20) + " MiB: nothing was produced");
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines->push_back(std::move(line));
  }
  if (in.bad()) return Status::IOError(source + ": read failed");
  return Status::OK();
}

int RunProduce(const ProduceArgs& args) {
  if (!args.file.empty() && !args.messages.empty()) {
    return ReportError(Status::InvalidArgument("give the messages as arguments or in --file, not both"));
  }
  std::vector<std::string> values = args.messages;
  if (!args.file.empty()) {
    std::ifstream in(args.file);
    if (!in) return ReportError(Status::NotFound("cannot read " + args.file));
    if (Status s = ReadLines(in, args.file, &values); !s.ok()) return ReportError(s);
  } else if (values.empty()) {
    if (Status s = ReadLines(std::cin, "stdin", &values); !s.ok()) return ReportError(s);
  }
  if (values.empty()) {
    return ReportError(
        Status::InvalidArgument("no messages: give them as arguments, in --file or one a line on stdin"));
  }
  if (args.skip >= values.size()) {
    return ReportError(
        Status::InvalidArgument(fmt::format("--skip {}: there are only {} message(s)", args.skip, values.size())));
  }
  values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(args.skip));
  std::vector<std::vector<TopicWrite>> batches;
  Status s = SplitBatches(args.key, values, &batches);
  std::unique_ptr<Topic> topic;
  if (s.ok()) s = OpenTopic(args.dir, &topic);
  if (s.ok()) s = CheckRoom(args.dir, batches);
  uint64_t stored = 0, first_offset = 0;
  for (size_t i = 0; s.ok() && i < batches.size(); ++i) {
    TopicProduced produced;
    s = topic->Produce(batches[i], &produced);
    if (!s.ok()) break;
    if (stored == 0) first_offset = produced.first_offset;
    stored += produced.count;
    std::cout << fmt::format("produced {} message(s) at offsets {}..{}\n", produced.count, produced.first_offset,
                             produced.first_offset + produced.count - 1);
  }
  if (!s.ok() && stored > 0) {
    // Each batch is durable on its own: say exactly which messages are in
    // the topic, and how to produce the rest without repeating them.
    const uint64_t done = args.skip + stored;
    s = s.WithContext(fmt::format(
        "the first {} of {} message(s) were stored (offsets {}..{}), the rest were not; to produce the rest once: "
        "spool topic produce {} --file {} --skip {}",
        done, args.skip + values.size(), first_offset, first_offset + stored - 1, args.dir,
        args.file.empty() ? "FILE" : args.file, done));
  }
  return s.ok() ? kExitOk : ReportError(s);
}

// ---------------------------------------------------------------------------
// consume

struct ConsumeArgs {
  std::string dir;
  uint64_t from = 0;
  bool from_given = false;
  uint64_t max = 0;
  bool as_json = false;
};

int RunConsume(const ConsumeArgs& args) {
  std::unique_ptr<Topic> topic;
  Status s = OpenTopic(args.dir, &topic);
  if (!s.ok()) return ReportError(s);
  const uint64_t from = args.from_given ? args.from : topic->Info().oldest_offset;
  TopicReadLimits limits;
  if (args.max > 0) limits.max_messages = args.max;
  Table table({"offset", "timestamp (UTC)", "key", "value"});
  uint64_t shown = 0;
  s = topic->Read(from, limits, [&](const TopicMessage& m) {
    ++shown;
    if (!args.as_json) {
      table.AddRow({std::to_string(m.offset), FormatTimestamp(m.timestamp_us), Preview(m.key, m.key.size()),
                    Preview(m.value, m.value.size())});
      return true;
    }
    ordered_json line{
        {"offset", m.offset}, {"timestamp", FormatTimestamp(m.timestamp_us)}, {"timestamp_us", m.timestamp_us}};
    PutBytes(&line, "key", m.key);
    PutBytes(&line, "value", m.value);
    std::cout << JsonText(line) << "\n";
    return true;
  });
  if (!s.ok()) return ReportError(s);
  if (!args.as_json) {
    std::cout << table.ToString()
              << fmt::format("({} message(s) from offset {}; next offset {})\n", shown, from,
                             topic->Info().next_offset);
  }
  return kExitOk;
}

// ---------------------------------------------------------------------------
// info

void PrintInfo(const TopicInfo& info) {
  const std::string offsets = info.messages == 0 ? fmt::format("none retained (next {})", info.next_offset)
                                                 : fmt::format("{} .. {} (next {})", info.oldest_offset,
                                                               info.next_offset - 1, info.next_offset);
  std::cout << fmt::format(
      "topic           {}\noffsets         {}\nmessages        {}\nsize            {} in {} segment(s)\n", info.dir,
      offsets, FormatCount(info.messages), FormatBytes(info.bytes), info.segments);
  if (info.messages > 0) {
    std::cout << fmt::format("oldest message  {}\nnewest message  {}\n", FormatTimestamp(info.oldest_timestamp_us),
                             FormatTimestamp(info.newest_timestamp_us));
  }
  std::cout << fmt::format("retention       {}\nsegment size    {}\n", RetentionText(info.config.retention),
                           FormatBytes(info.config.segment_size_bytes));
}

int RunInfo(const std::string& dir, bool as_json) {
  std::unique_ptr<Topic> topic;
  Status s = OpenTopic(dir, &topic);
  if (!s.ok()) return ReportError(s);
  const TopicInfo info = topic->Info();
  if (!as_json) {
    PrintInfo(info);
    return kExitOk;
  }
  ordered_json out{{"dir", info.dir},
                   {"oldest_offset", info.oldest_offset},
                   {"next_offset", info.next_offset},
                   {"messages", info.messages},
                   {"bytes", info.bytes},
                   {"segments", info.segments},
                   {"oldest_timestamp_us", info.oldest_timestamp_us},
                   {"newest_timestamp_us", info.newest_timestamp_us},
                   {"retention_age_us", info.config.retention.age_us},
                   {"retention_bytes", info.config.retention.bytes},
                   {"segment_size_bytes", info.config.segment_size_bytes}};
  std::cout << JsonText(out, 2) << "\n";
  return kExitOk;
}

// ---------------------------------------------------------------------------
// retention

struct RetentionArgs {
  std::string dir;
  std::string age;  // empty: unchanged
  uint64_t bytes = 0;
  bool bytes_given = false;
  bool as_json = false;
};

int RunRetention(const RetentionArgs& args) {
  uint64_t age_us = 0;
  if (!args.age.empty()) {
    Status s = ParseDuration(args.age, &age_us);
    if (!s.ok()) return ReportError(s);
  }
  std::unique_ptr<Topic> topic;
  Status s = OpenTopic(args.dir, &topic);
  if (!s.ok()) return ReportError(s);
  if (!args.age.empty() || args.bytes_given) {
    TopicRetention retention = topic->Info().config.retention;
    if (!args.age.empty()) retention.age_us = age_us;
    if (args.bytes_given) retention.bytes = args.bytes;
    s = topic->SetRetention(retention);
    if (!s.ok()) return ReportError(s);
    if (!args.as_json) std::cout << fmt::format("retention now: {}\n", RetentionText(retention));
  }
  TopicRetentionReport report;
  s = topic->ApplyRetention(&report);
  if (!s.ok()) return ReportError(s);
  if (args.as_json) {
    const TopicRetention retention = topic->Info().config.retention;
    std::cout << JsonText(ordered_json{{"retention", {{"age_us", retention.age_us}, {"bytes", retention.bytes}}},
                                       {"segments_deleted", report.segments_deleted},
                                       {"messages_deleted", report.messages_deleted},
                                       {"bytes_deleted", report.bytes_deleted},
                                       {"oldest_offset_before", report.oldest_offset_before},
                                       {"oldest_offset", report.oldest_offset}},
                          2)
              << "\n";
  } else if (report.segments_deleted == 0) {
    std::cout << fmt::format("nothing to delete; oldest retained offset {}\n", report.oldest_offset);
  } else {
    std::cout << fmt::format("deleted {} segment(s): {} message(s), {}; oldest retained offset now {}\n",
                             report.segments_deleted, FormatCount(report.messages_deleted),
                             FormatBytes(report.bytes_deleted), report.oldest_offset);
  }
  return kExitOk;
}

}  // namespace

void RegisterTopicCommands(CLI::App& app, int* exit_code) {
  CLI::App* group = app.add_subcommand("topic", "The durable topic: create, produce, consume, info, retention");
  group->require_subcommand(1);

  auto create_args = std::make_shared<TopicCreateArgs>();
  CLI::App* create = group->add_subcommand("create", "Create a topic in DIR (a new or empty directory)");
  create->add_option("dir", create_args->dir, "Topic directory")->required();
  create->add_option("--retention", create_args->retention, "Keep messages this long, e.g. 36h, 7d (0d: forever)")
      ->capture_default_str();
  create
      ->add_option("--retention-bytes", create_args->retention_bytes,
                   "Keep the log below this many bytes (0: no limit)")
      ->check(WholeNumber());
  create
      ->add_option("--segment-bytes", create_args->segment_bytes,
                   "Log segment size in bytes, retention's unit (65536 to 1073741824)")
      ->check(WholeNumber())
      ->capture_default_str();
  create->callback([=] { *exit_code = RunTopicCreate(*create_args); });

  auto produce_args = std::make_shared<ProduceArgs>();
  CLI::App* produce = group->add_subcommand("produce", "Append messages (arguments, or one a line on stdin) durably");
  produce->add_option("dir", produce_args->dir, "Topic directory")->required();
  produce->add_option("messages", produce_args->messages, "Message values (default: one per line of stdin)");
  produce->add_option("--key", produce_args->key, "The key of every message (default: empty)");
  produce->add_option("--file", produce_args->file, "Read the messages from this file, one a line");
  produce
      ->add_option("--skip", produce_args->skip,
                   "Leave out the first N messages (to finish a produce that stopped after N)")
      ->check(WholeNumber());
  produce->callback([=] { *exit_code = RunProduce(*produce_args); });

  auto consume_args = std::make_shared<ConsumeArgs>();
  CLI::App* consume = group->add_subcommand("consume", "Print messages from an offset on");
  consume->add_option("dir", consume_args->dir, "Topic directory")->required();
  CLI::Option* from = consume->add_option("--from", consume_args->from, "First offset (default: the oldest retained)")
                          ->check(WholeNumber());
  consume->add_option("--max", consume_args->max, "At most this many messages (0: all)")->check(WholeNumber());
  consume->add_flag("--json", consume_args->as_json,
                    "JSON lines (key and value as text, or key_base64 / value_base64 when not UTF-8)");
  consume->callback([=] {
    consume_args->from_given = from->count() > 0;
    *exit_code = RunConsume(*consume_args);
  });

  auto info_dir = std::make_shared<std::string>();
  auto info_json = std::make_shared<bool>(false);
  CLI::App* info = group->add_subcommand("info", "Offsets, size, timestamps and settings of a topic");
  info->add_option("dir", *info_dir, "Topic directory")->required();
  info->add_flag("--json", *info_json, "JSON output");
  info->callback([=] { *exit_code = RunInfo(*info_dir, *info_json); });

  auto retention_args = std::make_shared<RetentionArgs>();
  CLI::App* retention = group->add_subcommand("retention", "Apply retention now (optionally changing it first)");
  retention->add_option("dir", retention_args->dir, "Topic directory")->required();
  retention->add_option("--retention", retention_args->age, "New age limit, e.g. 36h, 7d (0d: forever)");
  CLI::Option* bytes =
      retention->add_option("--retention-bytes", retention_args->bytes, "New size limit in bytes (0: no limit)")
          ->check(WholeNumber());
  retention->add_flag("--json", retention_args->as_json, "JSON output");
  retention->callback([=] {
    retention_args->bytes_given = bytes->count() > 0;
    *exit_code = RunRetention(*retention_args);
  });
}

}  // namespace spool::cli
