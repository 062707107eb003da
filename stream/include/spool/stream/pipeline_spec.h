// A pipeline's definition (docs/design.md): datasets — streaming tables and
// materialized views — and the flows that write them. A flow reads one
// source, runs its steps (operators) in order and writes one target.
//
// Two ways to write one: the JSON spec that the CLI and the server take
// (ParsePipelineSpec; docs/pipelines.md has the format), or these structs,
// filled directly or through PipelineBuilder:
//
//   PipelineBuilder b("orders");
//   b.StreamingTable("main.shop.orders_clean");
//   b.StreamingTable("main.shop.revenue").PrimaryKey({"country"});
//   b.Flow("clean")
//       .FromTopic("/data/topics/orders", {{"id", ColumnType::kInt64, false},
//                                          {"country", ColumnType::kString},
//                                          {"amount", ColumnType::kDouble}})
//       .Filter("amount > 0")
//       .Into("main.shop.orders_clean");
//   b.Flow("revenue")
//       .FromDataset("main.shop.orders_clean")
//       .Aggregate({"country"}, {{"revenue", AggregateFn::kSum, "amount"}})
//       .Into("main.shop.revenue");
//   PipelineSpec spec = b.Build();
//
// Nothing is checked until the spec is compiled (Pipeline::Open,
// SetPipelineDefinition): then every error names its place in the spec,
// e.g. `flows[1] "revenue" steps[0] aggregate: unknown column 'amout'`.
//
// User operators (C++ only): Map takes a callable that turns each input row
// into zero or more output rows of the columns it declares. It must be
// deterministic and keep no state of its own: a replay calls it again on the
// same rows, and only what the pipeline stores survives a crash.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "spool/storage/schema.h"
#include "spool/txnlog/status.h"

namespace spool {

struct DatasetSpec {
  std::string name;  // catalog.schema.table
  TableKind kind = TableKind::kStreamingTable;
  // Declared columns; empty: those of the flow writing it (its first flow).
  std::vector<Column> columns;
  // Declared key; empty: the key of the rows its flow emits (a grouped
  // aggregate's groups, AUTO CDC's keys), or none (an append-only table).
  std::vector<std::string> primary_key;
  std::map<std::string, std::string> properties;
};

enum class SourceKind : uint8_t { kDataset = 1, kFiles, kTopic, kJetStream };
enum class FileFormat : uint8_t { kJsonLines = 1, kCsv };
enum class BadRecords : uint8_t { kFail = 1, kRescue };

// How to reach a NATS server and its JetStream (docs/jetstream.md). Secrets
// never stand in a spec: it names the environment variables or files that
// hold them, read when the connection opens.
struct NatsConnectionSpec {
  std::vector<std::string> servers;  // nats://host:port, tried in turn
  // user and password, or a token, or a .creds file (JWT and nkey seed)
  std::string user_env, user_file;
  std::string password_env, password_file;
  std::string token_env, token_file;
  std::string creds_file;
  // TLS: the CA that signed the server's certificate, and a client
  // certificate and key when the server asks for one.
  std::string tls_ca_file, tls_cert_file, tls_key_file;
  // How long one read or publish waits for a server that is down or
  // restarting before the update fails (a transient failure, retried by
  // the update's retry policy).
  uint64_t max_wait_us = 30'000'000;
};

// Where a new JetStream source starts (once it has a checkpoint, it goes on
// from there).
enum class StartAt : uint8_t { kFirst = 1, kNew, kSequence, kTime };

struct JetStreamSpec {
  NatsConnectionSpec connection;
  std::string stream;
  // A source: the subjects it reads (a filter, wildcards allowed; empty:
  // every subject of the stream). A sink: the subject it publishes to;
  // "{catalog}", "{schema}" and "{table}" stand for its dataset's name.
  std::string subject;
  StartAt start = StartAt::kFirst;
  uint64_t start_sequence = 0;  // kSequence
  int64_t start_time_us = 0;    // kTime: the first message stored at or after it
};

struct SourceSpec {
  SourceKind kind = SourceKind::kDataset;
  // kDataset: a dataset of this pipeline (or a table of the store). Read as
  // the stream of its committed changes: appends of an append-only table;
  // the change feed (with _change_type, _commit_version and
  // _commit_timestamp) of a keyed one.
  std::string dataset;
  // Skip commits that update or delete rows instead of failing on them (so
  // a downstream streaming table survives an upstream full refresh).
  bool skip_change_commits = false;
  // kFiles: a directory; kTopic: a topic directory (stream/topic.h).
  // Relative paths are taken from the process's working directory when the
  // spec is parsed.
  std::string path;
  // kFiles and kTopic: the columns each record (file line, message value)
  // holds. Files are JSON lines or CSV; topic messages are JSON objects.
  std::vector<Column> columns;
  FileFormat format = FileFormat::kJsonLines;
  // A record that does not fit: fail the update, or keep it with the
  // offending fields in a `_rescued_data` string column (then every
  // declared column must be nullable).
  BadRecords bad_records = BadRecords::kFail;
  // kJetStream: the stream read, by stream sequence; its messages are JSON
  // objects with `columns`, as a topic's are.
  JetStreamSpec jetstream;
};

enum class AggregateFn : uint8_t { kCount = 1, kSum, kMin, kMax, kAvg };

struct AggregateSpec {
  std::string name;  // the output column
  AggregateFn fn = AggregateFn::kCount;
  std::string expression;  // its argument; empty with kCount: count(*)
};

// Tumbling event-time windows: [start, start + size) with start a multiple
// of size since the epoch. Rows whose time is below the watermark (the
// highest time seen, less `watermark_delay_us`) are dropped as late.
struct WindowSpec {
  std::string time_column;  // a timestamp column
  uint64_t size_us = 0;
  uint64_t watermark_delay_us = 0;
};

struct WatermarkSpec {
  std::string time_column;
  uint64_t delay_us = 0;
};

struct FilterStep {
  std::string condition;
};
struct SelectStep {
  std::vector<std::pair<std::string, std::string>> columns;  // name, expression
};
// Global: one output row per group, updated as rows arrive (the target is
// keyed by the groups). Windowed: one row per group and window, appended
// once the watermark passes the window's end (columns window_start,
// window_end, then the groups, then the aggregates). A global aggregate of
// counts, sums, minima and maxima whose flow alone writes its target keeps
// its running values in the target's rows rather than in a state table:
// while it does, a change made to those rows by other means is what it
// continues from (docs/pipelines.md, "Where an aggregate keeps its groups").
struct AggregateStep {
  std::vector<std::string> group_by;
  std::vector<AggregateSpec> aggregates;
  std::optional<WindowSpec> window;
};
// Keeps the first row of each key. With a watermark, keys are forgotten once
// their time falls below it, and rows below it are dropped as late.
struct DedupStep {
  std::vector<std::string> keys;
  std::optional<WatermarkSpec> watermark;
};
enum class JoinType : uint8_t { kInner = 1, kLeft };
struct JoinKey {
  std::string left;
  std::string right;
};
// Each row joined with the current rows of a table: the row's columns, then
// the table's (`columns`, default all but the join keys).
struct LookupJoinStep {
  std::string table;
  std::vector<JoinKey> on;
  JoinType type = JoinType::kInner;
  std::vector<std::string> columns;
};
// The flow's rows joined with a second stream: equal keys and event times
// at most `within_us` apart. Rows below the watermark (the highest time seen
// on either side less the delay) are late and dropped; buffered rows that no
// future row can match are forgotten.
struct StreamJoinStep {
  SourceSpec right;
  std::vector<JoinKey> on;
  std::string left_time;
  std::string right_time;
  uint64_t within_us = 0;
  uint64_t watermark_delay_us = 0;
  std::vector<std::string> columns;  // of the right side; default all but the keys
};
// AUTO CDC (APPLY CHANGES): the rows are change events applied by key in
// `sequence_by` order, whatever order they arrive in.
struct AutoCdcStep {
  std::vector<std::string> keys;
  std::string sequence_by;
  std::string apply_as_deletes;                 // a condition; empty: no deletes
  std::vector<std::string> column_list;         // the columns kept; empty: all
  std::vector<std::string> except_column_list;  // or all but these
  int scd_type = 1;                             // 1: upsert by key; 2: history rows with __START_AT / __END_AT
  // SCD 2: only changes of these columns open a new history row (others
  // update the current one); empty: every column.
  std::vector<std::string> track_history_column_list;
  std::vector<std::string> track_history_except_column_list;
};
struct MapStep {
  std::string name;
  std::vector<Column> columns;  // of the rows it emits
  std::function<Status(const Row& in, std::vector<Row>* out)> fn;
};

using StepSpec = std::variant<FilterStep, SelectStep, AggregateStep, DedupStep, LookupJoinStep, StreamJoinStep,
                              AutoCdcStep, MapStep>;

struct FlowSpec {
  // Letters, digits and '_', unique in the pipeline; or, the default when
  // the spec names none, the target's full identifier (catalog.schema.table).
  std::string name;
  std::string target;  // a dataset of the pipeline
  SourceSpec source;
  std::vector<StepSpec> steps;
  // Run one backfill, then stay idle until the flow's definition changes or
  // a full refresh reruns it.
  bool once = false;
  // Upper bounds of one micro-batch (0: none).
  uint64_t max_batch_rows = 100000;
  uint64_t max_batch_files = 1000;
};

// What a sink publishes of its dataset's change data feed, one message per
// change row: every row of the feed (`insert`, `update_preimage`,
// `update_postimage`, `delete`), or, for a keyed dataset, `upsert` (the
// row as it now is) and `delete` (the row removed) only.
enum class SinkMode : uint8_t { kChanges = 1, kUpserts };

// A dataset's changes published to a message system, in commit order, each
// change once (docs/jetstream.md): after every pass of an update, the
// commits since the last one it published.
struct SinkSpec {
  // Letters, digits and '_', unique among the pipeline's sinks.
  std::string name;
  std::string dataset;  // a dataset of the pipeline
  SinkMode mode = SinkMode::kChanges;
  JetStreamSpec jetstream;
};

struct PipelineSpec {
  std::string name;
  // A continuous pipeline: every update of it runs until stopped, taking a
  // batch of each flow with data per pass and waiting the configuration's
  // "pipelines.trigger.interval" (default 1 s) when a pass finds nothing.
  bool continuous = false;
  // Pipeline settings, e.g. "pipelines.allowUpdateAfterIncompleteRewind":
  // "true" (docs/rewind.md), "pipelines.trigger.interval": "5 seconds".
  std::map<std::string, std::string> configuration;
  std::vector<DatasetSpec> datasets;
  std::vector<FlowSpec> flows;
  std::vector<SinkSpec> sinks;
};

// Parses the JSON spec. Errors: InvalidArgument naming the place in the
// spec ("flows[2].steps[0].filter: …") and what is wrong with it. Types,
// columns and the DAG are checked when the spec is compiled.
Status ParsePipelineSpec(std::string_view text, PipelineSpec* spec);
// The JSON spec (a MapStep as {"map": name}, which does not parse back into
// a runnable step).
std::string PipelineSpecToJson(const PipelineSpec& spec);

std::string_view AggregateFnName(AggregateFn fn);  // "count", "sum", "min", "max", "avg"
std::string_view SourceKindName(SourceKind kind);  // "dataset", "files", "topic", "jetstream"
// What a source reads, for listings and messages: the dataset's name, the
// directory, or the stream with its subject filter ("ORDERS orders.>").
std::string SourceLocation(const SourceSpec& source);

class FlowBuilder {
 public:
  FlowBuilder(std::vector<FlowSpec>* flows, size_t index) : flows_(flows), index_(index) {}
  FlowBuilder& FromDataset(std::string dataset, bool skip_change_commits = false);
  FlowBuilder& FromFiles(std::string dir, std::vector<Column> columns, FileFormat format = FileFormat::kJsonLines,
                         BadRecords bad_records = BadRecords::kFail);
  FlowBuilder& FromTopic(std::string dir, std::vector<Column> columns, BadRecords bad_records = BadRecords::kFail);
  FlowBuilder& FromJetStream(JetStreamSpec jetstream, std::vector<Column> columns,
                             BadRecords bad_records = BadRecords::kFail);
  FlowBuilder& Filter(std::string condition);
  FlowBuilder& Select(std::vector<std::pair<std::string, std::string>> columns);
  FlowBuilder& Aggregate(std::vector<std::string> group_by, std::vector<AggregateSpec> aggregates,
                         std::optional<WindowSpec> window = std::nullopt);
  FlowBuilder& Dedup(std::vector<std::string> keys, std::optional<WatermarkSpec> watermark = std::nullopt);
  FlowBuilder& Step(StepSpec step);
  FlowBuilder& Map(std::string name, std::vector<Column> columns,
                   std::function<Status(const Row& in, std::vector<Row>* out)> fn);
  FlowBuilder& Once(bool once = true);
  FlowBuilder& MaxBatchRows(uint64_t rows);
  FlowBuilder& Into(std::string target);

 private:
  FlowSpec& flow() { return (*flows_)[index_]; }
  std::vector<FlowSpec>* flows_;
  size_t index_;
};

class DatasetBuilder {
 public:
  DatasetBuilder(std::vector<DatasetSpec>* datasets, size_t index) : datasets_(datasets), index_(index) {}
  DatasetBuilder& Columns(std::vector<Column> columns);
  DatasetBuilder& PrimaryKey(std::vector<std::string> key);
  DatasetBuilder& Property(std::string name, std::string value);

 private:
  DatasetSpec& dataset() { return (*datasets_)[index_]; }
  std::vector<DatasetSpec>* datasets_;
  size_t index_;
};

// Fills a PipelineSpec. The builders it returns stay valid while it lives.
class PipelineBuilder {
 public:
  explicit PipelineBuilder(std::string name) { spec_.name = std::move(name); }
  DatasetBuilder StreamingTable(std::string name);
  DatasetBuilder MaterializedView(std::string name);
  // A flow; unnamed (""), it takes its target's full identifier (Into).
  FlowBuilder Flow(std::string name = "");
  // Publishes `dataset`'s changes to the JetStream subject `jetstream.subject`.
  void Sink(std::string name, std::string dataset, JetStreamSpec jetstream, SinkMode mode = SinkMode::kChanges);
  PipelineSpec Build() const { return spec_; }

 private:
  PipelineSpec spec_;
};

}  // namespace spool
