#include "stream_step_engine.h"

#include <map>

#include "engine.h"

namespace spool::bench {
namespace {

constexpr char kEventPrefix = 'e';
constexpr char kStatePrefix = 's';
constexpr char kOutputPrefix = 'o';
constexpr size_t kIntBytes = 8;

void AppendBigEndian(uint64_t v, std::string* out) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xff));
}

uint64_t BigEndianAt(std::string_view bytes) {
  uint64_t v = 0;
  for (char c : bytes.substr(0, kIntBytes)) v = v << 8 | static_cast<uint8_t>(c);
  return v;
}

void AppendLittleEndian(uint64_t v, std::string* out) {
  for (size_t i = 0; i < kIntBytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t LittleEndianAt(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = kIntBytes; i-- > 0;) v = v << 8 | static_cast<uint8_t>(bytes[i]);
  return v;
}

std::string PrefixedKey(char prefix, uint64_t v) {
  std::string key(1, prefix);
  AppendBigEndian(v, &key);
  return key;
}

// The step by hand on a peer's store (stream_step_engine.h).
class PeerStreamStep final : public StreamStepEngine {
 public:
  PeerStreamStep(std::unique_ptr<PeerStepStore> store, PeerState state) : store_(std::move(store)), state_(state) {}
  ~PeerStreamStep() override { (void)Close(); }

  std::string_view name() const override { return store_->name(); }

  Status Open(const std::string& dir, uint64_t events_per_step, uint64_t keys) override {
    events_per_step_ = events_per_step;
    keys_ = keys;
    SPOOL_RETURN_IF_ERROR(store_->Open(dir));
    return store_->ReadOffset(&next_offset_);
  }

  Status Stage(uint64_t count) override {
    for (uint64_t first = 0; first < count; first += events_per_step_) {
      const std::vector<std::string> messages = EventMessages(first, std::min(events_per_step_, count - first), keys_);
      SPOOL_RETURN_IF_ERROR(store_->AppendEvents(first, messages));
    }
    staged_ = count;
    return Status::OK();
  }

  Status Run(const StepDone& done) override {
    while (next_offset_ < staged_) {
      uint64_t output_rows = 0;
      const uint64_t count = std::min(events_per_step_, staged_ - next_offset_);
      SPOOL_RETURN_IF_ERROR(RunPeerStep(*store_, state_, next_offset_, count, &output_rows));
      next_offset_ += count;
      done(output_rows);
    }
    return Status::OK();
  }

  Status ReadOutput(std::vector<KeyTotals>* totals) override { return ReadPeerTotals(*store_, totals, keys_); }

  Status Close() override { return store_->Close(); }

 private:
  const std::unique_ptr<PeerStepStore> store_;
  const PeerState state_;
  uint64_t events_per_step_ = 0;
  uint64_t keys_ = kStreamKeys;
  uint64_t staged_ = 0;
  uint64_t next_offset_ = 0;
};

}  // namespace

// The events' deltas per key (in key order, so that the writes go to the
// trees in order), then a read-modify-write of each key's state, its output
// row and the offset, committed durably.
Status RunPeerStep(PeerStepStore& store, PeerState state_in, uint64_t from, uint64_t count, uint64_t* output_rows) {
  using Totals = PeerStepStore::Totals;
  const Totals state_table = state_in == PeerState::kStateTable ? Totals::kState : Totals::kOutput;
  SPOOL_RETURN_IF_ERROR(store.Begin());
  std::map<int64_t, KeyTotals> deltas;
  uint64_t read = 0;
  bool parsed = true;
  SPOOL_RETURN_IF_ERROR(store.ReadEvents(from, count, [&](std::string_view message) {
    StreamEvent e;
    parsed = parsed && ParseEventMessage(message, &e);
    KeyTotals& d = deltas[e.key];
    ++d.count;
    d.sum += e.amount;
    ++read;
  }));
  if (!parsed || read != count) {
    return Status::Corruption(std::string(store.name()) + " read " + std::to_string(read) + " events from offset " +
                              std::to_string(from) + (parsed ? "" : ", not all of them events"));
  }
  for (const auto& [key, delta] : deltas) {
    KeyTotals state;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(store.GetTotals(state_table, key, &state, &found));
    state.count += delta.count;
    state.sum += delta.sum;
    if (state_table == Totals::kState) SPOOL_RETURN_IF_ERROR(store.PutTotals(Totals::kState, key, state));
    SPOOL_RETURN_IF_ERROR(store.PutTotals(Totals::kOutput, key, state));
  }
  SPOOL_RETURN_IF_ERROR(store.PutOffset(from + count));
  SPOOL_RETURN_IF_ERROR(store.Commit());
  *output_rows = deltas.size();
  return Status::OK();
}

Status ReadPeerTotals(PeerStepStore& store, std::vector<KeyTotals>* totals, uint64_t keys) {
  totals->assign(keys, KeyTotals{});
  Status fits;
  SPOOL_RETURN_IF_ERROR(store.ReadOutput([&](int64_t key, const KeyTotals& t) {
    if (key < 0 || static_cast<uint64_t>(key) >= keys) {
      fits = Status::Corruption(std::string(store.name()) + "'s output has key " + std::to_string(key));
    } else {
      (*totals)[static_cast<size_t>(key)] = t;
    }
  }));
  return fits;
}

std::unique_ptr<PeerStepStore> MakePeerStepStore(std::string_view engine) {
  if (engine == kRocksDb) return NewRocksDbStepStore();
  if (engine == kLevelDb) return NewLevelDbStepStore();
  if (engine == kLmdb) return NewLmdbStepStore();
  if (engine == kSqlite) return NewSqliteStepStore();
  return nullptr;
}

std::unique_ptr<StreamStepEngine> MakeStreamStepEngine(std::string_view engine, PeerState state) {
  if (engine == kSpool) return NewSpoolStreamStep();
  std::unique_ptr<PeerStepStore> store = MakePeerStepStore(engine);
  if (store == nullptr) return nullptr;
  return std::make_unique<PeerStreamStep>(std::move(store), state);
}

namespace stepkv {

std::string EventKey(uint64_t offset) { return PrefixedKey(kEventPrefix, offset); }
std::string OutputKey(int64_t key) { return PrefixedKey(kOutputPrefix, static_cast<uint64_t>(key)); }
std::string TotalsKey(PeerStepStore::Totals table, int64_t key) {
  return table == PeerStepStore::Totals::kState ? PrefixedKey(kStatePrefix, static_cast<uint64_t>(key))
                                                : OutputKey(key);
}
std::string OutputEnd() { return std::string(1, kOutputPrefix + 1); }

std::string EncodeTotals(const KeyTotals& totals) {
  std::string bytes;
  AppendLittleEndian(static_cast<uint64_t>(totals.count), &bytes);
  AppendLittleEndian(static_cast<uint64_t>(totals.sum), &bytes);
  return bytes;
}

std::string EncodeOffset(uint64_t offset) {
  std::string bytes;
  AppendBigEndian(offset, &bytes);
  return bytes;
}

Status DecodeTotals(std::string_view bytes, KeyTotals* totals) {
  if (bytes.size() != kTotalsBytes) return Status::Corruption("a state or output entry is not 16 bytes");
  totals->count = static_cast<int64_t>(LittleEndianAt(bytes));
  totals->sum = static_cast<int64_t>(LittleEndianAt(bytes.substr(kIntBytes)));
  return Status::OK();
}

Status DecodeOffset(std::string_view bytes, uint64_t* offset) {
  if (bytes.size() != kIntBytes) return Status::Corruption("the offset entry is not 8 bytes");
  *offset = BigEndianAt(bytes);
  return Status::OK();
}

Status DecodeOutputKey(std::string_view entry_key, int64_t* key) {
  if (entry_key.size() != 1 + kIntBytes || entry_key[0] != kOutputPrefix) {
    return Status::Corruption("an entry among the outputs is not an output");
  }
  *key = static_cast<int64_t>(BigEndianAt(entry_key.substr(1)));
  return Status::OK();
}

}  // namespace stepkv
}  // namespace spool::bench
