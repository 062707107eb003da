// A downstream consumer of Spool's JetStream sinks, for the tests: reads
// every message of a stream with its Nats-Msg-Id, counts duplicates and
// gaps by those ids (`<store>.<sink>.<version>.<n>`: each version's
// messages numbered 1, 2, …), and applies the messages by key as a service
// keeping a copy of the table would ("upsert", "insert" and
// "update_postimage" set the row, "delete" removes it).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <nlohmann/json.hpp>

#include "nats_server.h"

namespace spool::testing {

struct SinkMessage {
  std::string sink;
  uint64_t version = 0;
  uint64_t index = 0;
  std::string id;
  nlohmann::json body;
};

class SinkConsumer {
 public:
  // Reads the messages of `stream` after the last one read.
  [[nodiscard]] ::testing::AssertionResult Catch(const NatsEndpoint& server, const std::string& stream) {
    NatsClient client;
    if (auto r = server.Connect(&client); !r) return r;
    NatsStreamState state;
    if (auto r = client.GetStreamState(stream, &state); !r) return r;
    for (next_ = std::max(next_, state.first_sequence); next_ != 0 && next_ <= state.last_sequence; ++next_) {
      natsMsg* msg = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      natsStatus s = js_GetMsg(&msg, client.jetstream(), stream.c_str(), next_, nullptr, &code);
      if (s != NATS_OK) {
        return ::testing::AssertionFailure() << "js_GetMsg " << stream << " " << next_ << ": " << natsStatus_GetText(s);
      }
      const char* id = nullptr;
      (void)natsMsgHeader_Get(msg, "Nats-Msg-Id", &id);
      SinkMessage m;
      m.id = id != nullptr ? id : "";
      m.body = nlohmann::json::parse(std::string(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))),
                                     nullptr, false);
      natsMsg_Destroy(msg);
      Take(std::move(m));
    }
    return ::testing::AssertionSuccess();
  }

  // The rows of `sink`'s table as its messages made them, keyed by the
  // JSON of their `key` column.
  const std::map<std::string, nlohmann::json>& rows(const std::string& sink) { return rows_[sink]; }
  // Every message of `sink`, in order.
  const std::vector<SinkMessage>& messages(const std::string& sink) { return messages_[sink]; }
  uint64_t total() const { return total_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t gaps() const { return gaps_; }
  // Which column keys a sink's rows (default "id").
  void set_key(const std::string& sink, std::string key) { keys_[sink] = std::move(key); }

 private:
  void Take(SinkMessage m) {
    ++total_;
    if (!ids_.insert(m.id).second) ++duplicates_;
    const size_t a = m.id.find('.'), b = m.id.find('.', a + 1), c = m.id.find('.', b + 1);
    if (a == std::string::npos || b == std::string::npos || c == std::string::npos) {
      ++gaps_;  // not a sink's message: counted as damage
      return;
    }
    m.sink = m.id.substr(a + 1, b - a - 1);
    m.version = std::stoull(m.id.substr(b + 1, c - b - 1));
    m.index = std::stoull(m.id.substr(c + 1));
    auto& [version, index] = last_[m.sink];
    if (m.version == version ? m.index != index + 1 : (m.version < version || m.index != 1)) ++gaps_;
    version = m.version;
    index = m.index;
    const std::string type = m.body.value("_change_type", "");
    auto key = keys_.find(m.sink);
    const std::string k = m.body[key == keys_.end() ? "id" : key->second].dump();
    if (type == "delete") rows_[m.sink].erase(k);
    else if (type != "update_preimage") rows_[m.sink][k] = m.body;
    messages_[m.sink].push_back(std::move(m));
  }

  uint64_t next_ = 1;
  uint64_t total_ = 0, duplicates_ = 0, gaps_ = 0;
  std::set<std::string> ids_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> last_;
  std::map<std::string, std::string> keys_;
  std::map<std::string, std::map<std::string, nlohmann::json>> rows_;
  std::map<std::string, std::vector<SinkMessage>> messages_;
};

}  // namespace spool::testing
