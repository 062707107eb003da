// `spool demo --jetstream`: the demo's story with NATS JetStream at both
// ends. A local nats-server starts (JetStream on, loopback, a free port, its
// store in the demo's directory); orders flow in from the stream ORDERS,
// revenue per country flows out to TOTALS through a sink, and a downstream
// consumer applies what it receives. A bad deployment doubles the amounts;
// the operator finds the first bad commit, rewinds, deploys the fix and
// replays — reading the orders again from the stream — and the consumer's
// copy ends equal to the table, which equals a store that never had the
// bug. The server is stopped at the end; the store is left to explore.

#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nats/nats.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "demo_script.h"
#include "nats_server_process.h"

namespace spool::cli {
namespace {

// The demo's nats-server (NatsServerProcess) and a connection to it.
class LocalNats {
 public:
  ~LocalNats() { Stop(); }

  Status Start(const std::string& dir) {
    std::filesystem::create_directories(dir);
    SPOOL_RETURN_IF_ERROR(server_.Start(dir));
    natsStatus s = natsConnection_ConnectTo(&nc_, server_.url().c_str());
    if (s == NATS_OK) s = natsConnection_JetStream(&js_, nc_, nullptr);
    return s == NATS_OK ? Status::OK()
                        : Status::IOError("connecting to " + server_.url() + ": " + natsStatus_GetText(s));
  }

  void Stop() {
    if (js_ != nullptr) jsCtx_Destroy(js_);
    if (nc_ != nullptr) natsConnection_Destroy(nc_);
    js_ = nullptr;
    nc_ = nullptr;
    (void)server_.Stop();
  }

  Status CreateStream(const char* name, const char* subjects) {
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = name;
    config.Subjects = &subjects;
    config.SubjectsLen = 1;
    jsStreamInfo* info = nullptr;
    natsStatus s = js_AddStream(&info, js_, &config, nullptr, nullptr);
    jsStreamInfo_Destroy(info);
    return s == NATS_OK ? Status::OK()
                        : Status::IOError(std::string("creating stream ") + name + ": " + natsStatus_GetText(s));
  }

  Status Publish(const std::string& subject, const std::string& data) {
    jsPubAck* ack = nullptr;
    natsStatus s = js_Publish(&ack, js_, subject.c_str(), data.data(), static_cast<int>(data.size()), nullptr, nullptr);
    jsPubAck_Destroy(ack);
    return s == NATS_OK ? Status::OK() : Status::IOError("publishing to " + subject + ": " + natsStatus_GetText(s));
  }

  // The data of the stream's messages after sequence `*next - 1`.
  Status Read(const char* stream, uint64_t* next, std::vector<std::string>* out) {
    while (true) {
      natsMsg* msg = nullptr;
      natsStatus s = js_GetMsg(&msg, js_, stream, *next, nullptr, nullptr);
      if (s == NATS_NOT_FOUND) return Status::OK();
      if (s != NATS_OK) return Status::IOError(std::string("reading ") + stream + ": " + natsStatus_GetText(s));
      out->emplace_back(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
      natsMsg_Destroy(msg);
      ++*next;
    }
  }

  std::string url() const { return server_.url(); }

 private:
  NatsServerProcess server_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

// The pipeline: orders from the stream, cleaned (`amount` the deployed
// transformation), revenue per country, published as upserts. Without the
// sink: the reference store's.
std::string PipelineJson(const std::string& url, const std::string& amount, bool sink) {
  using json = nlohmann::ordered_json;
  const json servers = json::array({url});
  json spec = {{"name", "shop"},
               {"datasets", {{{"name", "main.shop.orders"}}, {{"name", "main.shop.revenue"}}}},
               {"flows",
                {{{"name", "ingest"},
                  {"target", "main.shop.orders"},
                  {"source",
                   {{"jetstream", {{"servers", servers}, {"stream", "ORDERS"}, {"subject", "orders.>"}}},
                    {"columns",
                     {{{"name", "order_id"}, {"type", "int64"}, {"nullable", false}},
                      {{"name", "country"}, {"type", "string"}},
                      {{"name", "amount"}, {"type", "int64"}}}}}},
                  {"steps",
                   {{{"filter", "amount > 0 AND country IS NOT NULL"}},
                    {{"select",
                      {"order_id",
                       {{"name", "country"}, {"expr", "coalesce(country, '?')"}},
                       {{"name", "amount"}, {"expr", amount}}}}}}}},
                 {{"name", "revenue"},
                  {"target", "main.shop.revenue"},
                  {"source", {{"dataset", "main.shop.orders"}}},
                  {"steps",
                   {{{"aggregate",
                      {{"group_by", {"country"}},
                       {"aggregates",
                        {{{"name", "orders"}, {"fn", "count"}},
                         {{"name", "revenue"}, {"fn", "sum"}, {"expr", "amount"}}}}}}}}}}}}};
  if (sink) {
    spec["sinks"] = {{{"name", "revenue_out"},
                      {"dataset", "main.shop.revenue"},
                      {"mode", "upserts"},
                      {"jetstream", {{"servers", servers}, {"stream", "TOTALS"}, {"subject", "totals.{table}"}}}}};
  }
  return spec.dump(2) + "\n";
}

class JetStreamDemo : public DemoScript {
 public:
  explicit JetStreamDemo(std::string dir) : DemoScript(std::move(dir)) {}

  int Play() {
    Say("Spool reads a pipeline's input from NATS JetStream and publishes its results to it, exactly once.\n"
        "This demo runs one in " +
        dir_ + ", breaks it with a bad deployment, rewinds it, and watches a downstream consumer converge.");
    if (!StartServer() || !SetUp() || !Flow(1, 60, false) || !Flow(61, 120, true) || !Rewind() || !Replay() ||
        !CompareWithReference()) {
      std::cerr << "demo: failed at " << failed_at_ << "\n";
      return kExitFailure;
    }
    nats_.Stop();
    std::cout << fmt::format(
        "\ndemo: all checks passed. The NATS server is stopped; the store is left in {0}, for instance:\n"
        "  {1} pipeline show {2}\n"
        "  {1} changes {2} main.shop.revenue --from 1\n"
        "  {1} events {2} --type sink_progress\n",
        dir_, SelfCommand(), store_);
    return kExitOk;
  }

 private:
  bool StartServer() {
    Step("1. A local NATS server with JetStream, and two streams: ORDERS (orders.>) in, TOTALS (totals.>) out.");
    Status s = nats_.Start(dir_ + "/nats");
    if (s.ok()) s = nats_.CreateStream("ORDERS", "orders.>");
    if (s.ok()) s = nats_.CreateStream("TOTALS", "totals.>");
    if (!s.ok()) return Failed("starting nats-server: " + std::string(s.message()));
    Say("nats-server listening on " + nats_.url() + " (log: " + dir_ + "/nats/nats-server.log)");
    return true;
  }

  bool SetUp() {
    Step("2. A store and the pipeline: orders from ORDERS, cleaned, revenue per country, published to TOTALS.");
    Write("pipeline.json", PipelineJson(nats_.url(), "amount", true));
    Write("pipeline-bad.json", PipelineJson(nats_.url(), "amount * 2", true));
    Write("pipeline-reference.json", PipelineJson(nats_.url(), "amount", false));
    return (Run({"init", store_}) && Run({"pipeline", "set", store_, dir_ + "/pipeline.json"})) || Failed("setting up");
  }

  // Orders first..last published to ORDERS (every tenth without a country:
  // the filter drops it), an update, and what the consumer then holds.
  bool Flow(int first, int last, bool bad) {
    static const char* const kCountries[] = {"de", "fr", "it", "nl"};
    Step(bad ? "4. A bad deployment doubles every amount; orders 61-120 arrive and flow through it."
             : "3. Orders 1-60 arrive in ORDERS; an update reads them and the sink publishes the totals.");
    if (bad && !Run({"pipeline", "set", store_, dir_ + "/pipeline-bad.json"})) return Failed("deploying");
    for (int id = first; id <= last; ++id) {
      const std::string country = id % 10 == 0 ? "null" : fmt::format("\"{}\"", kCountries[id % 4]);
      Status s = nats_.Publish("orders.new", fmt::format(R"({{"order_id": {}, "country": {}, "amount": {}}})", id,
                                                         country, 300 + (id * 37) % 201));
      if (!s.ok()) return Failed(std::string(s.message()));
    }
    Say(fmt::format("nats: published orders {}-{} to orders.new", first, last));
    return (Run({"update", store_}) && Run({"read", store_, "main.shop.revenue"}) && Consume()) || Failed("the update");
  }

  // The downstream consumer applies TOTALS' new messages by country.
  bool Consume() {
    std::vector<std::string> messages;
    Status s = nats_.Read("TOTALS", &next_, &messages);
    if (!s.ok()) return Failed(std::string(s.message()));
    for (const std::string& m : messages) {
      const nlohmann::json j = nlohmann::json::parse(m, nullptr, false);
      if (j.is_discarded()) return Failed("a message of TOTALS that is not JSON");
      if (j["_change_type"] == "delete") consumer_.erase(j["country"].get<std::string>());
      else consumer_[j["country"].get<std::string>()] = j["revenue"].get<int64_t>();
    }
    std::string line;
    for (const auto& [country, revenue] : consumer_) line += fmt::format("  {} {}", country, revenue);
    Say(fmt::format("downstream consumer: {} new messages from TOTALS; it now holds:{}", messages.size(), line));
    return true;
  }

  bool Rewind() {
    Step("5. Amounts over 500 cannot be. The first bad commit, a dry run of the rewind, and the rewind.");
    std::string found;
    if (!Run({"rewind-points", "find", store_, "--table", "main.shop.orders", "--where", "amount > 500"}, &found)) {
      return Failed("finding the point");
    }
    const std::string point = WordAfter(found, "rewind point ");
    return (point.size() == 36 && Run({"rewind", store_, "--point", point, "--dry-run"}) &&
            Run({"rewind", store_, "--point", point})) ||
           Failed("the rewind");
  }

  bool Replay() {
    Step(
        "6. The fix is deployed; the replay reads orders 61-120 again from ORDERS, and the sink publishes the\n"
        "   rewind's net change and the replay's.");
    return (Run({"pipeline", "set", store_, dir_ + "/pipeline.json"}) && Run({"update", store_}) &&
            Run({"read", store_, "main.shop.revenue"}) && Consume()) ||
           Failed("the replay");
  }

  bool CompareWithReference() {
    Step("7. The checks: the consumer's copy equals the table, which equals a store that never had the bug.");
    std::string csv;
    if (!Run({"read", store_, "main.shop.revenue", "--format", "csv"}, &csv, true)) return Failed("reading revenue");
    std::map<std::string, int64_t> table;
    std::istringstream lines(csv);
    std::string line;
    std::getline(lines, line);  // country,orders,revenue
    while (std::getline(lines, line)) {
      const size_t a = line.find(','), b = line.rfind(',');
      table[line.substr(0, a)] = std::stoll(line.substr(b + 1));
    }
    Say(std::string("  downstream consumer      ") + (table == consumer_ ? "equal" : "DIFFERENT") +
        " to main.shop.revenue");
    if (table != consumer_) return Failed("the consumer's copy differs from the table");
    const std::string reference = dir_ + "/reference";
    if (!Run({"init", reference}, nullptr, true) ||
        !Run({"pipeline", "set", reference, dir_ + "/pipeline-reference.json"}, nullptr, true) ||
        !Run({"update", reference}, nullptr, true)) {
      return Failed("the reference run");
    }
    return SameTable(reference, "main.shop.orders") && SameTable(reference, "main.shop.revenue");
  }

  LocalNats nats_;
  uint64_t next_ = 1;  // the consumer's next sequence of TOTALS
  std::map<std::string, int64_t> consumer_;
};

}  // namespace

int RunJetStreamDemo(const std::string& dir) { return JetStreamDemo(dir).Play(); }

}  // namespace spool::cli
