#include "nats_client.h"

#include <algorithm>

#include <fmt/format.h>

namespace spool::bench {
namespace {

// Each JetStream request, fetch and wait for acknowledgements waits this long.
constexpr int64_t kWaitMs = 30'000;
constexpr int64_t kNanosPerMilli = 1'000'000;
// In flight at once before a publish waits (as Spool's sink: 4 × its fetch).
constexpr int64_t kMaxPendingAcks = 4096;
// How long a consumer outlives a reader that vanished.
constexpr int64_t kConsumerInactiveNs = 60LL * 1000 * kNanosPerMilli;

Status FromNats(natsStatus s, std::string_view what, jsErrCode code = static_cast<jsErrCode>(0)) {
  if (s == NATS_OK) return Status::OK();
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  std::string text = fmt::format("{}: {}", what, natsStatus_GetText(s));
  if (detail != nullptr && *detail != '\0' && last == s) text += fmt::format(" ({})", detail);
  if (code != 0) text += fmt::format(" (JetStream error {})", static_cast<int>(code));
  return Status::IOError(text);
}

jsOptions RequestOptions() {
  jsOptions options;
  jsOptions_Init(&options);
  options.Wait = kWaitMs;
  return options;
}

struct SubscriptionCloser {
  void operator()(natsSubscription* sub) const {
    (void)natsSubscription_Unsubscribe(sub);  // deletes the ephemeral consumer
    natsSubscription_Destroy(sub);
  }
};

}  // namespace

NatsClient::~NatsClient() {
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (connection_ != nullptr) natsConnection_Destroy(connection_);
}

void NatsClient::OnAck(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* err, void* closure) {
  auto* acks = static_cast<Acks*>(closure);
  {
    std::lock_guard lock(acks->mu);
    ++acks->received;
    if (ack != nullptr && ack->Duplicate) ++acks->duplicates;
    if (ack == nullptr && acks->first_error.empty()) {
      const char* text = err != nullptr && err->ErrText != nullptr ? err->ErrText : "no acknowledgement";
      acks->first_error = fmt::format("a message to {} was refused: {}", natsMsg_GetSubject(msg), text);
    }
  }
  natsMsg_Destroy(msg);
}

Status NatsClient::Connect(const std::string& url) {
  natsOptions* raw = nullptr;
  SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_Create(&raw), "NATS options"));
  std::unique_ptr<natsOptions, decltype(&natsOptions_Destroy)> options(raw, natsOptions_Destroy);
  SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_SetURL(options.get(), url.c_str()), "NATS url"));
  SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_SetName(options.get(), "spool-bench"), "NATS name"));
  SPOOL_RETURN_IF_ERROR(FromNats(natsConnection_Connect(&connection_, options.get()), "connecting to " + url));
  jsOptions js_options = RequestOptions();
  js_options.PublishAsync.MaxPending = kMaxPendingAcks;
  js_options.PublishAsync.AckHandler = OnAck;
  js_options.PublishAsync.AckHandlerClosure = &acks_;
  return FromNats(natsConnection_JetStream(&js_, connection_, &js_options), "JetStream at " + url);
}

Status NatsClient::CreateStream(const std::string& name, const std::string& subjects) {
  const char* subject_list[] = {subjects.c_str()};
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  config.Name = name.c_str();
  config.Subjects = subject_list;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  jsOptions request = RequestOptions();
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const natsStatus s = js_AddStream(&info, js_, &config, &request, &code);
  if (info != nullptr) jsStreamInfo_Destroy(info);
  return FromNats(s, "creating stream " + name, code);
}

Status NatsClient::DeleteStream(const std::string& name) {
  jsOptions request = RequestOptions();
  jsErrCode code = static_cast<jsErrCode>(0);
  return FromNats(js_DeleteStream(js_, name.c_str(), &request, &code), "deleting stream " + name, code);
}

Status NatsClient::StreamMessages(const std::string& name, uint64_t* messages) {
  jsOptions request = RequestOptions();
  jsStreamInfo* info = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetStreamInfo(&info, js_, name.c_str(), &request, &code);
  if (info != nullptr) {
    *messages = info->State.Msgs;
    jsStreamInfo_Destroy(info);
  }
  return FromNats(s, "the state of stream " + name, code);
}

Status NatsClient::PublishAndWait(const std::string& subject, const std::vector<NatsOutMessage>& messages) {
  {
    std::lock_guard lock(acks_.mu);
    acks_.received = acks_.duplicates = 0;
    acks_.first_error.clear();
  }
  for (const NatsOutMessage& m : messages) {
    natsMsg* msg = nullptr;
    SPOOL_RETURN_IF_ERROR(FromNats(
        natsMsg_Create(&msg, subject.c_str(), nullptr, m.data.data(), static_cast<int>(m.data.size())), "a message"));
    for (const auto& [key, value] : m.headers) natsMsgHeader_Set(msg, key.c_str(), value.c_str());
    jsPubOptions options;
    jsPubOptions_Init(&options);
    if (!m.id.empty()) options.MsgId = m.id.c_str();
    const natsStatus s = js_PublishMsgAsync(js_, &msg, &options);
    natsMsg_Destroy(msg);  // nothing when the library took it
    SPOOL_RETURN_IF_ERROR(FromNats(s, "publishing to " + subject));
  }
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = kWaitMs;
  SPOOL_RETURN_IF_ERROR(FromNats(js_PublishAsyncComplete(js_, &wait), "waiting for the acks of " + subject));
  std::lock_guard lock(acks_.mu);
  if (!acks_.first_error.empty()) return Status::IOError(acks_.first_error);
  if (acks_.received != messages.size() || acks_.duplicates != 0) {
    return Status::IOError(fmt::format("{} messages published to {}: {} acknowledged, {} of them as duplicates",
                                       messages.size(), subject, acks_.received, acks_.duplicates));
  }
  return Status::OK();
}

Status NatsClient::FetchBatch(natsSubscription* sub, uint64_t want, bool with_ids, std::vector<natsMsg*>* held,
                              NatsBatch* batch) {
  while (batch->data.size() < want) {
    jsFetchRequest request;
    jsFetchRequest_Init(&request);
    request.Batch = static_cast<int>(want - batch->data.size());
    request.Expires = kWaitMs * kNanosPerMilli;
    natsMsgList list{nullptr, 0};
    SPOOL_RETURN_IF_ERROR(FromNats(natsSubscription_FetchRequest(&list, sub, &request), "fetching"));
    for (int i = 0; i < list.Count; ++i) {
      natsMsg* msg = list.Msgs[i];
      list.Msgs[i] = nullptr;  // held until the visit is done
      held->push_back(msg);
      batch->data.emplace_back(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
      if (with_ids) {
        const char* id = nullptr;
        batch->ids.emplace_back(natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK ? id : "");
      }
    }
    natsMsgList_Destroy(&list);
  }
  if (held->empty()) return Status::OK();
  jsMsgMetaData* meta = nullptr;
  SPOOL_RETURN_IF_ERROR(FromNats(natsMsg_GetMetaData(&meta, held->back()), "a message's metadata"));
  batch->last_sequence = meta->Sequence.Stream;
  jsMsgMetaData_Destroy(meta);
  return Status::OK();
}

Status NatsClient::ReadStream(const std::string& stream, const std::string& filter, uint64_t total, uint64_t batch,
                              bool with_ids, const BatchVisit& visit) {
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Config.AckPolicy = js_AckNone;
  so.Config.DeliverPolicy = js_DeliverAll;
  so.Config.InactiveThreshold = kConsumerInactiveNs;
  so.Config.MemoryStorage = true;
  so.Config.Replicas = 1;
  jsOptions request = RequestOptions();
  natsSubscription* raw = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  SPOOL_RETURN_IF_ERROR(
      FromNats(js_PullSubscribe(&raw, js_, filter.c_str(), nullptr, &request, &so, &code), "reading " + stream, code));
  std::unique_ptr<natsSubscription, SubscriptionCloser> sub(raw);
  std::vector<natsMsg*> held;
  NatsBatch next;
  for (uint64_t read = 0; read < total; read += next.data.size()) {
    next.data.clear();
    next.ids.clear();
    Status s = FetchBatch(sub.get(), std::min(batch, total - read), with_ids, &held, &next);
    if (s.ok()) s = visit(next);
    for (natsMsg* msg : held) natsMsg_Destroy(msg);
    held.clear();
    SPOOL_RETURN_IF_ERROR(s);
  }
  return Status::OK();
}

}  // namespace spool::bench
