// The conformance suite's harness: a shop pipeline on a store of its own,
// served by the real HTTP server (HttpServer over ApiService, in-process,
// on a free port) and driven over HTTP with the reference API's bodies; the
// `spool` CLI where a behaviour is the command line's; and StoreFingerprint,
// which captures everything a request could change, so that a refused
// request can be shown to have changed nothing.
//
// The shop (ShopSpec): orders come from a topic into main.shop.raw (flow
// `ingest`), are cleaned into main.shop.orders (flow `clean`, where a bad
// deployment goes), and feed main.shop.revenue (a keyed aggregate, its flow
// unnamed so that its name is the table's full identifier),
// main.shop.big_orders (append-only, flow `big_orders_flow`) and the
// materialized view main.shop.by_country. Customers come from a directory
// of JSON-lines files into main.shop.customers (AUTO CDC, flow
// `customers`).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api_service.h"
#include "http_server.h"
#include "spool/rewind/rewind_points.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "spool/stream/topic.h"
#include "temp_dir.h"

namespace spool::conformance {

using json = nlohmann::json;

inline constexpr char kToken[] = "conformance-token";
inline constexpr uint64_t kSecond = 1000000;
inline constexpr char kPeriodicMessage[] = "Periodic rewind summary capturing current table versions.";

// The store's clock: the real one plus an offset the test moves forward
// (Advance), so that commits can be far apart without waiting.
class ClockEnv : public EnvWrapper {
 public:
  ClockEnv() : EnvWrapper(Env::Default()) {}
  uint64_t NowMicros() override { return target()->NowMicros() + offset_.load(); }
  void Advance(uint64_t micros) { offset_ += micros; }

 private:
  std::atomic<uint64_t> offset_{0};
};

// What the pipeline's sources read through: the real file system, with a
// gate that holds the reading of a file whose path contains a marker until
// the test opens it (an update held in RUNNING, deterministically), and
// failures to inject (an I/O error reading a source: a transient failure).
class GateEnv : public EnvWrapper {
 public:
  GateEnv() : EnvWrapper(Env::Default()) {}
  ~GateEnv() override { Open(); }
  Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override;

  // The next opens of paths containing `marker` wait until Open().
  void Close(const std::string& marker);
  // Waits until a reader waits at the gate (bounded: false after 60 s).
  bool WaitUntilHeld();
  void Open();
  // The next `times` opens of paths containing `marker` fail with IOError.
  void Fail(const std::string& marker, int times);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::string gate_marker_;
  bool gate_closed_ = false;
  int waiting_ = 0;
  std::string fail_marker_;
  int fail_times_ = 0;
};

// An HTTP answer.
struct Http {
  int status = 0;
  std::string body;
  std::string content_type;
  json Json() const;
  // A field of the JSON body, by value (safe to iterate over).
  json Field(const std::string& key) const;
  std::string ErrorCode() const;  // the error body's error_code, or ""
};

// A request to 127.0.0.1:port (Boost.Beast, a connection per request).
// `authorization` empty: no Authorization header.
Http HttpRequest(uint16_t port, const std::string& method, const std::string& target, const std::string& body,
                 const std::string& authorization);
// Bytes written as they are, and the one response read back.
Http HttpRaw(uint16_t port, const std::string& bytes);

// Everything of the open store a request could change: each table's rows
// (internal tables included), its kind, schema and properties, and its
// history; each flow's checkpoint; every event of the event log; the log's
// newest position.
struct StoreFingerprint {
  std::map<std::string, std::string> tables;                // name -> kind, columns, key, properties
  std::map<std::string, std::vector<std::string>> rows;     // name -> rows, as read
  std::map<std::string, std::vector<std::string>> history;  // name -> commits, newest first
  std::map<std::string, std::string> checkpoints;           // flow -> checkpoint ("(none)")
  std::vector<std::string> events;                          // in sequence order
  std::string log_position;

  static StoreFingerprint Capture(Store* store, const Pipeline& pipeline);
};
// What differs between two fingerprints, readably; empty when nothing does.
// A row as JSON values, as Shop::Rows gives them.
std::string RowText(const Row& row);

// `ignore_events`: compare the data only (tables, history, checkpoints).
std::string FingerprintDiff(const StoreFingerprint& before, const StoreFingerprint& after, bool ignore_events = false);

// The shop's pipeline spec (see the top of this file), as JSON.
struct ShopSpecOptions {
  std::string amount_expr = "amount";  // the clean flow's amount: the deployed transformation
  std::string clean_filter;            // a filter in the clean flow (none when empty)
  std::map<std::string, std::string> configuration;
  std::map<std::string, std::string> orders_properties;
  std::vector<std::string> revenue_group_by = {"country"};
  bool big_orders_skip_change_commits = false;
};
std::string ShopSpec(const std::string& topic_dir, const std::string& customers_dir, const ShopSpecOptions& options);

// One shop: its store (in dir/<name>/store), topic and customer files, its
// pipeline, and the HTTP server serving it.
class Shop {
 public:
  // `log_segment_bytes`: the store's log segments (0: the default), small
  // for vacuum to have whole segments to delete.
  Shop(const TempDir& root, const std::string& name, const ShopSpecOptions& options = {},
       uint64_t log_segment_bytes = 0);
  ~Shop();

  // --- the store and what the pipeline reads -------------------------------
  const std::string& store_dir() const { return store_dir_; }
  const std::string& topic_dir() const { return topic_dir_; }
  const std::string& customers_dir() const { return customers_dir_; }
  Store* store() { return store_.get(); }
  Pipeline* pipeline() { return pipeline_.get(); }
  cli::ApiService* service() { return service_.get(); }
  const std::string& pipeline_id() const { return pipeline_id_; }
  ClockEnv& clock() { return clock_; }
  GateEnv& sources() { return sources_; }
  const ShopSpecOptions& spec_options() const { return options_; }

  // Orders first .. first + count - 1 into the topic, as one batch: {"id",
  // "country" (de for multiples of 3, else fr), "amount": 10 + id}.
  void Produce(int64_t first, int64_t count);
  // The same orders, each with a key of random bytes that does not
  // compress: 1,500 of them fill more than a segment of the topic.
  void ProducePadded(int64_t first, int64_t count);
  // Deletes the topic's sealed segments (its segments are 64 KiB): what a
  // short retention does. The topic's oldest retained offset after it.
  uint64_t ExpireTopicRecords();
  // A file of customer change events in the customers directory.
  void AddCustomers(const std::string& file, const std::string& jsonl);
  void Tick(uint64_t seconds) { clock_.Advance(seconds * kSecond); }
  // "yyyy-MM-dd HH:mm:ss" of the store's clock now (less `back` seconds).
  std::string Timestamp(uint64_t back_seconds = 0);

  // Records the new definition and serves it (the server restarts).
  void Deploy(const ShopSpecOptions& options);
  void DeploySpec(const std::string& spec_json);
  // Stops serving and closes the store (for the CLI); Reopen serves it again.
  void Close();
  void Reopen();

  // --- HTTP ------------------------------------------------------------------
  uint16_t port() const;
  std::string api() const { return "/api/2.0/pipelines/" + pipeline_id_; }
  // A request to the pipeline's API (`path` after …/pipelines/{id}).
  Http Call(const std::string& method, const std::string& path, const std::string& body = "",
            const std::string& token = kToken);
  Http Get(const std::string& path) { return Call("GET", path); }
  Http Post(const std::string& path, const std::string& body) { return Call("POST", path, body); }
  // POSTs an update; its id ("" and a failure when not answered 200).
  std::string Start(const std::string& body = "{}");
  // Waits for the running update to end (ApiService::WaitIdle), then GETs
  // the update's state.
  std::string Await(const std::string& update_id);
  // Start and Await: the update's final state.
  std::string Run(const std::string& body = "{}", std::string* update_id = nullptr);
  json GetUpdate(const std::string& update_id);

  // --- reading ---------------------------------------------------------------
  std::vector<std::string> Rows(const std::string& table);  // sorted
  std::vector<std::string> RowsAt(const std::string& table, uint64_t version);
  std::vector<HistoryEntry> History(const std::string& table);
  std::string Checkpoint(const std::string& flow);  // "(none)" when none
  std::vector<Event> Events(const std::string& type = "");
  // The rows `flow` read in update `update_id` (its flow_progress events),
  // and how many batches it committed.
  uint64_t InputRows(const std::string& update_id, const std::string& flow, uint64_t* batches = nullptr);
  uint64_t Newest() { return store_->log()->Newest().version; }
  // The messages of the update's ERROR events, one a line.
  std::string Errors(const std::string& update_id);
  StoreFingerprint Fingerprint() { return StoreFingerprint::Capture(store_.get(), *pipeline_); }

  // A point as the hourly job records it (the periodic message).
  RewindPoint RecordPeriodicPoint();
  // An incomplete rewind, as a crash between a rewind's two events leaves it:
  // a rewind_started event to `version` and nothing after it.
  void LeaveIncompleteRewind(uint64_t version);

  // Rewinds with the reference body's shape (datasets: the one identifier
  // with cascade and reset_checkpoints true).
  static std::string RewindBody(const std::string& target_field, const std::string& target,
                                const std::string& identifier, bool dry_run = false);

 private:
  void ProduceOrders(int64_t first, int64_t count, bool padded);
  void Serve();
  void StopServing();

  StoreOptions StoreOptionsFor();
  ShopSpecOptions options_;
  uint64_t log_segment_bytes_ = 0;
  std::string store_dir_, topic_dir_, customers_dir_;
  ClockEnv clock_;
  GateEnv sources_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Topic> topic_;
  std::unique_ptr<Pipeline> pipeline_;
  std::string pipeline_id_;
  std::unique_ptr<cli::ApiService> service_;
  std::unique_ptr<cli::HttpServer> server_;
};

// The shop's spec as JSON, to change what ShopSpecOptions does not reach.
json SpecOf(const Shop& shop);
// The shop's spec with one more aggregate in the revenue flow (flows[2]):
// max(amount) as max_amount.
json WithMaxAmount(const Shop& shop);

// The reference documents' story up to the rewind: customers c1 and orders
// 1..10 run with the good transformation; a periodic rewind point; a minute
// later the bad deployment (amounts doubled), customers c2 and orders 11..20
// run with it. `between`: a time strictly between the last good commit and
// the first bad one. `gap_seconds`: how much later the bad deployment comes
// (by the store's clock; 0 for a store the CLI, on the real clock, goes on
// with).
RewindPoint GoodThenBad(Shop& shop, std::string* between = nullptr, uint64_t gap_seconds = 60);
// Deploys the good transformation again: the fix.
void DeployFix(Shop& shop);
// The shop that never had the bug: the same input, the good transformation.
std::unique_ptr<Shop> RunWithoutTheBug(const TempDir& root, const std::string& name = "reference");
// The user tables of `shop` that differ from `reference`'s, with their rows.
std::string DifferingTables(Shop& shop, Shop& reference);

// Runs the spool CLI with `args` (each quoted for the shell); its exit code
// and its stdout and stderr together.
struct CliResult {
  int exit_code = -1;
  std::string output;
};
CliResult RunCli(const std::vector<std::string>& args);
// The same on `shop`'s store, closed meanwhile ("DIR" in `args` names it),
// then served again.
CliResult RunCliOn(Shop& shop, std::vector<std::string> args);

// `body` must be refused at once: 400 with `code`, no update id, nothing
// changed at all (no event either), the message saying `why`.
void ExpectRefusedAtOnce(Shop& shop, const std::string& body, const std::string& code, const std::string& why);

// Each test has its own temporary directory.
class ConformanceTest : public ::testing::Test {
 protected:
  std::unique_ptr<Shop> MakeShop(const std::string& name, const ShopSpecOptions& options = {}) {
    return std::make_unique<Shop>(dir_, name, options);
  }
  TempDir dir_;
};

// The tables a user reads (not the internal ones).
inline const std::vector<std::string>& ShopTables() {
  static const std::vector<std::string> tables = {"main.shop.raw",        "main.shop.orders",
                                                  "main.shop.revenue",    "main.shop.big_orders",
                                                  "main.shop.by_country", "main.shop.customers"};
  return tables;
}

}  // namespace spool::conformance

// Fails the test, with a readable difference, when the store changed.
#define EXPECT_UNCHANGED(shop, before) \
  EXPECT_EQ(::spool::conformance::FingerprintDiff((before), (shop).Fingerprint()), "")
#define EXPECT_DATA_UNCHANGED(shop, before) \
  EXPECT_EQ(::spool::conformance::FingerprintDiff((before), (shop).Fingerprint(), /*ignore_events=*/true), "")
