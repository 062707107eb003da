// NATS JetStream as a message log and a publisher (messaging.h), on the
// NATS C client (libnats).
//
// Reading keeps no position in NATS: each read goes through an ephemeral
// pull consumer created at the sequence the flow's checkpoint holds, with
// no acknowledgements, which the server forgets once the reader is gone.
// Publishing is asynchronous, acknowledged message by message, each
// message carrying its id (Nats-Msg-Id) for the stream's deduplication.
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nats/nats.h>

#include "messaging.h"

namespace spool::stream_internal {
namespace {

constexpr int64_t kNanosPerMicro = 1000;
// How long an ephemeral consumer outlives a reader that vanished.
constexpr int64_t kConsumerInactiveNs = 60'000'000'000;
// Messages one fetch asks for.
constexpr int kFetchBatch = 1024;

// What libnats said, with its last error's detail when it has one.
std::string NatsText(natsStatus s) {
  natsStatus last = NATS_OK;
  const char* detail = nats_GetLastError(&last);
  std::string text = natsStatus_GetText(s);
  if (detail != nullptr && *detail != '\0' && last == s && text != detail) text += " (" + std::string(detail) + ")";
  return text;
}

// A server out of reach is transient (IOError, which an update retries);
// what a server refuses is not.
Status FromNats(natsStatus s, int code, const std::string& what) {
  if (s == NATS_OK) return Status::OK();
  const std::string text =
      what + ": " + NatsText(s) + (code != 0 ? " (JetStream error " + std::to_string(code) + ")" : "");
  switch (s) {
    case NATS_NO_SERVER:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_TIMEOUT:
    case NATS_IO_ERROR:
    case NATS_STALE_CONNECTION:
    case NATS_NO_RESPONDERS:
    case NATS_DRAINING:
      return Status::IOError(text);
    default:
      return Status::InvalidArgument(text);
  }
}

// A secret named by the spec: an environment variable's value or a file's
// first line.
Status ReadSecret(const std::string& env, const std::string& file, const std::string& what, std::string* value) {
  if (!env.empty()) {
    const char* v = std::getenv(env.c_str());
    if (v == nullptr) return Status::InvalidArgument("the environment variable " + env + " (" + what + ") is not set");
    *value = v;
    return Status::OK();
  }
  std::ifstream in(file);
  if (!in) return Status::InvalidArgument("cannot read " + what + " from " + file);
  std::getline(in, *value);
  if (!value->empty() && value->back() == '\r') value->pop_back();
  return Status::OK();
}

// Whether some subject matches both patterns ('*' a token, '>' the rest).
bool SubjectsOverlap(std::string_view a, std::string_view b) {
  while (true) {
    const size_t da = a.find('.'), db = b.find('.');
    const std::string_view ta = a.substr(0, da), tb = b.substr(0, db);
    if (ta == ">" || tb == ">") return true;
    if (ta != "*" && tb != "*" && ta != tb) return false;
    if ((da == std::string_view::npos) != (db == std::string_view::npos)) return false;
    if (da == std::string_view::npos) return true;
    a.remove_prefix(da + 1);
    b.remove_prefix(db + 1);
  }
}

struct OptionsDeleter {
  void operator()(natsOptions* o) const { natsOptions_Destroy(o); }
};
struct StreamInfoDeleter {
  void operator()(jsStreamInfo* i) const { jsStreamInfo_Destroy(i); }
};
struct MsgDeleter {
  void operator()(natsMsg* m) const { natsMsg_Destroy(m); }
};
using StreamInfoPtr = std::unique_ptr<jsStreamInfo, StreamInfoDeleter>;

// What the acknowledgements of one Publish said.
struct Acks {
  std::mutex mu;
  uint64_t received = 0;
  uint64_t last = 0;  // the highest sequence acknowledged
  Status first_error;
};

void OnAck(jsCtx*, natsMsg* msg, jsPubAck* ack, jsPubAckErr* err, void* closure) {
  auto* acks = static_cast<Acks*>(closure);
  {
    std::lock_guard lock(acks->mu);
    ++acks->received;
    if (ack != nullptr) {
      acks->last = std::max(acks->last, ack->Sequence);
    } else if (err != nullptr && acks->first_error.ok()) {
      const char* id = nullptr;
      (void)natsMsgHeader_Get(msg, "Nats-Msg-Id", &id);
      const std::string what = "message " + std::string(id != nullptr ? id : "?") + " refused";
      const std::string text = what + ": " + (err->ErrText != nullptr ? err->ErrText : natsStatus_GetText(err->Err));
      if (err->ErrCode == JSStreamWrongLastSequenceErr) acks->first_error = Status::Aborted(text);
      else if (err->Err == NATS_TIMEOUT || err->Err == NATS_NO_RESPONDERS) acks->first_error = Status::IOError(text);
      else acks->first_error = Status::InvalidArgument(text);
    }
  }
  natsMsg_Destroy(msg);
}

// One connection and its JetStream context, and the stream they use.
class JetStreamConnection {
 public:
  ~JetStreamConnection() {
    if (js_ != nullptr) jsCtx_Destroy(js_);
    if (nc_ != nullptr) natsConnection_Destroy(nc_);
  }

  // `acks`: where asynchronous publishes report (a publisher's).
  Status Open(const JetStreamSpec& spec, Acks* acks) {
    spec_ = spec;
    const NatsConnectionSpec& c = spec.connection;
    where_ = "JetStream stream " + spec.stream + " at ";
    for (size_t i = 0; i < c.servers.size(); ++i) where_ += (i ? "," : "") + c.servers[i];
    natsOptions* raw = nullptr;
    SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_Create(&raw), 0, "NATS options"));
    std::unique_ptr<natsOptions, OptionsDeleter> opts(raw);
    SPOOL_RETURN_IF_ERROR(Configure(opts.get()));
    SPOOL_RETURN_IF_ERROR(FromNats(natsConnection_Connect(&nc_, opts.get()), 0, "connecting to " + where_));
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = static_cast<int64_t>(c.max_wait_us / 1000);
    if (acks != nullptr) {
      jo.PublishAsync.AckHandler = OnAck;
      jo.PublishAsync.AckHandlerClosure = acks;
      jo.PublishAsync.MaxPending = int64_t{4} * kFetchBatch;
    }
    return FromNats(natsConnection_JetStream(&js_, nc_, &jo), 0, where_);
  }

  Status Info(StreamInfoPtr* info) {
    jsStreamInfo* raw = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_GetStreamInfo(&raw, js_, spec_.stream.c_str(), nullptr, &code);
    info->reset(raw);
    if (s == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
      return Status::InvalidArgument(where_ + ": no stream " + spec_.stream + " on the server");
    }
    return FromNats(s, code, where_);
  }

  // The stream's subjects, for messages.
  static std::string Subjects(const jsStreamInfo& info) {
    std::string out;
    for (int i = 0; info.Config != nullptr && i < info.Config->SubjectsLen; ++i) {
      out += (i ? ", " : "") + std::string(info.Config->Subjects[i]);
    }
    return out;
  }
  // InvalidArgument unless `subject` can be one of the stream's subjects.
  Status CheckSubject(const jsStreamInfo& info, const std::string& subject, std::string_view role) const {
    for (int i = 0; info.Config != nullptr && i < info.Config->SubjectsLen; ++i) {
      if (SubjectsOverlap(subject, info.Config->Subjects[i])) return Status::OK();
    }
    return Status::InvalidArgument(where_ + ": the " + std::string(role) + " " + subject +
                                   " matches none of the stream's subjects (" + Subjects(info) + ")");
  }

  natsConnection* nc() const { return nc_; }
  jsCtx* js() const { return js_; }
  const std::string& where() const { return where_; }
  const JetStreamSpec& spec() const { return spec_; }

 private:
  Status Configure(natsOptions* o) {
    const NatsConnectionSpec& c = spec_.connection;
    std::vector<const char*> servers;
    for (const std::string& s : c.servers) servers.push_back(s.c_str());
    SPOOL_RETURN_IF_ERROR(
        FromNats(natsOptions_SetServers(o, servers.data(), static_cast<int>(servers.size())), 0, "NATS servers"));
    // A server that restarts is waited for (reads and publishes time out
    // after max_wait meanwhile); one that is not there at the start fails
    // the connection at once, and the update's retries take it from there.
    natsOptions_SetName(o, "spool");
    natsOptions_SetTimeout(o, 2000);
    natsOptions_SetAllowReconnect(o, true);
    natsOptions_SetMaxReconnect(o, -1);
    natsOptions_SetReconnectWait(o, 100);
    natsOptions_SetReconnectBufSize(o, 64 << 20);
    if (!c.user_env.empty() || !c.user_file.empty()) {
      std::string user, password;
      SPOOL_RETURN_IF_ERROR(ReadSecret(c.user_env, c.user_file, "the NATS user", &user));
      SPOOL_RETURN_IF_ERROR(ReadSecret(c.password_env, c.password_file, "the NATS password", &password));
      SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_SetUserInfo(o, user.c_str(), password.c_str()), 0, "NATS user"));
    }
    if (!c.token_env.empty() || !c.token_file.empty()) {
      std::string token;
      SPOOL_RETURN_IF_ERROR(ReadSecret(c.token_env, c.token_file, "the NATS token", &token));
      SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_SetToken(o, token.c_str()), 0, "NATS token"));
    }
    if (!c.creds_file.empty()) {
      SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_SetUserCredentialsFromFiles(o, c.creds_file.c_str(), nullptr), 0,
                                     "NATS credentials " + c.creds_file));
    }
    if (!c.tls_ca_file.empty() || !c.tls_cert_file.empty()) {
      SPOOL_RETURN_IF_ERROR(FromNats(natsOptions_SetSecure(o, true), 0, "NATS TLS"));
    }
    if (!c.tls_ca_file.empty()) {
      SPOOL_RETURN_IF_ERROR(
          FromNats(natsOptions_LoadCATrustedCertificates(o, c.tls_ca_file.c_str()), 0, "NATS TLS CA " + c.tls_ca_file));
    }
    if (!c.tls_cert_file.empty()) {
      SPOOL_RETURN_IF_ERROR(
          FromNats(natsOptions_LoadCertificatesChain(o, c.tls_cert_file.c_str(), c.tls_key_file.c_str()), 0,
                   "NATS TLS certificate " + c.tls_cert_file));
    }
    return Status::OK();
  }

  JetStreamSpec spec_;
  std::string where_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

class JetStreamLog : public MessageLog {
 public:
  ~JetStreamLog() override { CloseReader(); }

  Status Open(const JetStreamSpec& spec) {
    SPOOL_RETURN_IF_ERROR(conn_.Open(spec, nullptr));
    name_ = "JetStream stream " + spec.stream + (spec.subject.empty() ? "" : " (subjects " + spec.subject + ")");
    StreamInfoPtr info;
    SPOOL_RETURN_IF_ERROR(conn_.Info(&info));
    if (!spec.subject.empty()) SPOOL_RETURN_IF_ERROR(conn_.CheckSubject(*info, spec.subject, "subject filter"));
    return Status::OK();
  }

  const std::string& name() const override { return name_; }

  Status State(MessageLogState* state) override {
    StreamInfoPtr info;
    SPOOL_RETURN_IF_ERROR(conn_.Info(&info));
    state->last = info->State.LastSeq;
    state->first = info->State.Msgs == 0 ? info->State.LastSeq + 1 : info->State.FirstSeq;
    state->incarnation = std::to_string(info->Created);
    return Status::OK();
  }

  Status SequenceAt(int64_t time_us, uint64_t* sequence) override {
    MessageLogState state;
    SPOOL_RETURN_IF_ERROR(State(&state));
    *sequence = state.last + 1;
    SPOOL_RETURN_IF_ERROR(OpenReader(0, time_us * kNanosPerMicro));
    Status s = AskPending();
    if (s.ok() && pending_ > 0) {
      s = Fetch(1, [&](natsMsg*, uint64_t seq, int64_t, uint64_t) {
        *sequence = seq;
        return Status::OK();
      });
    }
    CloseReader();  // it began at a time, not where the next read begins
    return s;
  }

  Status Read(uint64_t from, uint64_t to, uint64_t max_messages, uint64_t,
              const std::function<Status(const LogMessage&)>& visit) override {
    if (sub_ == nullptr || reader_next_ != from) SPOOL_RETURN_IF_ERROR(OpenReader(from, 0));
    uint64_t read = 0;
    bool past_bound = false;
    Status s;
    while (s.ok() && !past_bound && read < max_messages) {
      // A fetch waits its whole expiry when the stream has nothing for it
      // (the 2.9 server long-polls even a no-wait request that expires):
      // the consumer is asked first whether it has anything.
      if (pending_ == 0 && (!(s = AskPending()).ok() || pending_ == 0)) break;
      const int batch = static_cast<int>(std::min<uint64_t>({max_messages - read, kFetchBatch, pending_}));
      int got = 0;
      s = Fetch(batch, [&](natsMsg* msg, uint64_t seq, int64_t time_ns, uint64_t pending) -> Status {
        ++got;
        if (seq > to) {  // past the bound: the reader must begin again there
          past_bound = true;
          return Status::OK();
        }
        LogMessage m;
        m.sequence = seq;
        m.timestamp_us = time_ns / kNanosPerMicro;
        m.data = std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg)));
        m.pending = pending;
        reader_next_ = seq + 1;
        pending_ = pending;
        ++read;
        return visit(m);
      });
      if (got == 0) pending_ = 0;  // asked again next time (the consumer may be gone)
    }
    if (!s.ok() || past_bound) CloseReader();
    return s;
  }

 private:
  // An ephemeral pull consumer delivering from `from` (or, with from 0,
  // from `time_ns`), unacknowledged.
  Status OpenReader(uint64_t from, int64_t time_ns) {
    CloseReader();
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = conn_.spec().stream.c_str();
    so.Config.AckPolicy = js_AckNone;
    so.Config.InactiveThreshold = kConsumerInactiveNs;
    so.Config.MemoryStorage = true;
    so.Config.Replicas = 1;
    if (from != 0) {
      so.Config.DeliverPolicy = js_DeliverByStartSequence;
      so.Config.OptStartSeq = from;
    } else {
      so.Config.DeliverPolicy = js_DeliverByStartTime;
      so.Config.OptStartTime = time_ns;
    }
    const std::string filter = conn_.spec().subject.empty() ? ">" : conn_.spec().subject;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_PullSubscribe(&sub_, conn_.js(), filter.c_str(), nullptr, nullptr, &so, &code);
    if (s != NATS_OK) {
      sub_ = nullptr;
      return FromNats(s, code, "reading " + conn_.where());
    }
    reader_next_ = from;
    pending_ = 0;
    return Status::OK();
  }

  void CloseReader() {
    if (sub_ == nullptr) return;
    (void)natsSubscription_Unsubscribe(sub_);  // deletes the consumer on the server
    natsSubscription_Destroy(sub_);
    sub_ = nullptr;
    reader_next_ = 0;
    pending_ = 0;
  }

  // How many messages the consumer has for the reader. A consumer the
  // server deleted (idle past its inactivity threshold between updates) is
  // created again where the reader stands.
  Status AskPending() {
    for (int attempt = 0;; ++attempt) {
      jsConsumerInfo* ci = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      natsStatus s = natsSubscription_GetConsumerInfo(&ci, sub_, nullptr, &code);
      if (s == NATS_OK) {
        pending_ = ci->NumPending;
        jsConsumerInfo_Destroy(ci);
        return Status::OK();
      }
      if ((s != NATS_NOT_FOUND && code != JSConsumerNotFoundErr) || attempt > 0 || reader_next_ == 0) {
        return FromNats(s, code, "reading " + conn_.where());
      }
      SPOOL_RETURN_IF_ERROR(OpenReader(reader_next_, 0));
    }
  }

  // One fetch of at most `batch` messages, without waiting for more than
  // the stream holds; each visited with its stream sequence, time and the
  // number of messages after it.
  Status Fetch(int batch, const std::function<Status(natsMsg*, uint64_t, int64_t, uint64_t)>& visit) {
    jsFetchRequest req;
    jsFetchRequest_Init(&req);
    req.Batch = batch;
    req.NoWait = true;
    req.Expires = static_cast<int64_t>(conn_.spec().connection.max_wait_us) * kNanosPerMicro;
    natsMsgList list{nullptr, 0};
    natsStatus s = natsSubscription_FetchRequest(&list, sub_, &req);
    if (s == NATS_TIMEOUT && natsConnection_Status(conn_.nc()) == NATS_CONN_STATUS_CONNECTED) {
      s = NATS_OK;  // nothing (more) now
    }
    Status out = FromNats(s, 0, "reading " + conn_.where());
    for (int i = 0; out.ok() && i < list.Count; ++i) {
      jsMsgMetaData* meta = nullptr;
      out = FromNats(natsMsg_GetMetaData(&meta, list.Msgs[i]), 0, "a message of " + conn_.where());
      if (!out.ok()) break;
      out = visit(list.Msgs[i], meta->Sequence.Stream, meta->Timestamp, meta->NumPending);
      jsMsgMetaData_Destroy(meta);
    }
    natsMsgList_Destroy(&list);
    return out;
  }

  JetStreamConnection conn_;
  std::string name_;
  natsSubscription* sub_ = nullptr;
  uint64_t reader_next_ = 0;  // the sequence the reader delivers next (0: not known)
  uint64_t pending_ = 0;      // messages the consumer holds after it (0: ask)
};

class JetStreamPublisher : public MessagePublisher {
 public:
  Status Open(const JetStreamSpec& spec, const std::string& subject) {
    subject_ = subject;
    SPOOL_RETURN_IF_ERROR(conn_.Open(spec, &acks_));
    name_ = "the subject " + subject + " of JetStream stream " + spec.stream;
    StreamInfoPtr info;
    SPOOL_RETURN_IF_ERROR(conn_.Info(&info));
    SPOOL_RETURN_IF_ERROR(conn_.CheckSubject(*info, subject, "subject"));
    duplicate_window_us_ = static_cast<uint64_t>(info->Config->Duplicates / kNanosPerMicro);
    max_bytes_ = static_cast<uint64_t>(natsConnection_GetMaxPayload(conn_.nc()));
    if (info->Config->MaxMsgSize > 0)
      max_bytes_ = std::min(max_bytes_, static_cast<uint64_t>(info->Config->MaxMsgSize));
    return Status::OK();
  }

  const std::string& name() const override { return name_; }
  uint64_t duplicate_window_us() const override { return duplicate_window_us_; }
  uint64_t max_message_bytes() const override { return max_bytes_; }

  Status Last(LastMessage* last) override {
    *last = LastMessage{};
    natsMsg* raw = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_GetLastMsg(&raw, conn_.js(), conn_.spec().stream.c_str(), subject_.c_str(), nullptr, &code);
    std::unique_ptr<natsMsg, MsgDeleter> msg(raw);
    if (code == JSStreamNotFoundErr) return Status::InvalidArgument(conn_.where() + ": no stream on the server");
    if (s == NATS_NOT_FOUND) return Status::OK();  // the subject holds none
    SPOOL_RETURN_IF_ERROR(FromNats(s, code, "the last message of " + name_));
    last->found = true;
    last->sequence = natsMsg_GetSequence(msg.get());
    const char** keys = nullptr;
    int count = 0;
    if (natsMsgHeader_Keys(msg.get(), &keys, &count) == NATS_OK) {
      for (int i = 0; i < count; ++i) {
        const char* value = nullptr;
        if (natsMsgHeader_Get(msg.get(), keys[i], &value) == NATS_OK && value != nullptr) {
          last->headers.emplace_back(keys[i], value);
          if (std::string_view(keys[i]) == "Nats-Msg-Id") last->id = value;
        }
      }
      free(static_cast<void*>(keys));
    }
    return Status::OK();
  }

  Status Send(const std::vector<OutMessage>& messages, bool fence, uint64_t expected_last) override {
    for (size_t i = 0; i < messages.size(); ++i) {
      const OutMessage& m = messages[i];
      natsMsg* msg = nullptr;
      SPOOL_RETURN_IF_ERROR(
          FromNats(natsMsg_Create(&msg, subject_.c_str(), nullptr, m.data.data(), static_cast<int>(m.data.size())), 0,
                   "a message to " + name_));
      for (const auto& [key, value] : m.headers) natsMsgHeader_Set(msg, key.c_str(), value.c_str());
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MsgId = m.id.c_str();
      po.MaxWait = static_cast<int64_t>(conn_.spec().connection.max_wait_us / 1000);
      if (fence && i == 0) {  // the subject must be where this writer left it
        if (expected_last == 0) po.ExpectNoMessage = true;
        else po.ExpectLastSubjectSeq = expected_last;
      }
      natsStatus s = js_PublishMsgAsync(conn_.js(), &msg, &po);
      natsMsg_Destroy(msg);  // nothing when the library took it
      if (s != NATS_OK) {
        AbandonPending();
        return FromNats(s, 0, "publishing to " + name_);
      }
    }
    return Status::OK();
  }

  Status Complete(uint64_t* last) override {
    jsPubOptions wait;
    jsPubOptions_Init(&wait);
    wait.MaxWait = static_cast<int64_t>(conn_.spec().connection.max_wait_us / 1000);
    natsStatus s = js_PublishAsyncComplete(conn_.js(), &wait);
    if (s != NATS_OK) AbandonPending();
    std::lock_guard lock(acks_.mu);
    Status acked = acks_.first_error.WithContext(name_);
    *last = acks_.last;
    acks_.first_error = Status::OK();
    SPOOL_RETURN_IF_ERROR(acked);
    return FromNats(s, 0, "waiting for " + name_ + " to store what was sent");
  }

 private:
  // Messages not acknowledged in time are dropped: a later round sends
  // them again, under the same ids.
  void AbandonPending() {
    natsMsgList pending{nullptr, 0};
    if (js_PublishAsyncGetPendingList(&pending, conn_.js()) == NATS_OK) natsMsgList_Destroy(&pending);
  }

  Acks acks_;  // before conn_, which reports to it until destroyed
  JetStreamConnection conn_;
  std::string subject_;
  std::string name_;
  uint64_t duplicate_window_us_ = 0;
  uint64_t max_bytes_ = 0;
};

}  // namespace

Status OpenJetStreamLog(const JetStreamSpec& spec, std::unique_ptr<MessageLog>* log) {
  auto js = std::make_unique<JetStreamLog>();
  SPOOL_RETURN_IF_ERROR(js->Open(spec));
  *log = std::move(js);
  return Status::OK();
}

Status OpenJetStreamPublisher(const JetStreamSpec& spec, const std::string& subject,
                              std::unique_ptr<MessagePublisher>* publisher) {
  auto js = std::make_unique<JetStreamPublisher>();
  SPOOL_RETURN_IF_ERROR(js->Open(spec, subject));
  *publisher = std::move(js);
  return Status::OK();
}

}  // namespace spool::stream_internal
