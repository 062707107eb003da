// A source reading a message log by sequence (messaging.h): JetStream today.
// Its offset in the flow's checkpoint is the next sequence to read and the
// log's incarnation, "<sequence>@<incarnation>", so that a stream deleted
// and created again under its name (its sequences start again) is told
// apart from one that holds new messages.
#include <algorithm>
#include <limits>

#include "messaging.h"
#include "record_source.h"

namespace spool::stream_internal {
namespace {

struct LogOffset {
  uint64_t next = 0;        // the next sequence to read (0: none read yet)
  std::string incarnation;  // of the log it was read from
};

Status ParseLogOffset(const std::string& text, const std::string& source, LogOffset* offset) {
  *offset = LogOffset{};
  if (text.empty()) return Status::OK();
  const size_t at = text.find('@');
  Status s = ParseOffset(text.substr(0, at), source, &offset->next);
  if (!s.ok() || at == std::string::npos || at + 1 == text.size()) {
    return Status::Corruption(source + ": the checkpoint's offset '" + text + "' is not <sequence>@<incarnation>");
  }
  offset->incarnation = text.substr(at + 1);
  return Status::OK();
}

std::string FormatLogOffset(uint64_t next, const std::string& incarnation) {
  return std::to_string(next) + "@" + incarnation;
}

class MessageLogSource : public RecordSource {
 public:
  using Opener = std::function<Status(std::unique_ptr<MessageLog>*)>;

  Status Init(const SourceSpec& spec, std::string description, Opener open, const std::string& place,
              uint64_t max_rows) {
    spec_ = spec;
    description_ = std::move(description);
    open_ = std::move(open);
    max_rows_ = max_rows == 0 ? std::numeric_limits<uint64_t>::max() : max_rows;
    return InitRecords(spec, description_, place);
  }

  // Connects on the first read, not here: a server that is down fails the
  // flow's batches (a transient failure), not the pipeline's start.
  Status Start(Store*, const std::string& offset, const stream_internal::StateTables&) override {
    SPOOL_RETURN_IF_ERROR(ParseLogOffset(offset, description_, &committed_));
    started_ = !offset.empty();
    next_ = committed_.next;
    bound_ = std::numeric_limits<uint64_t>::max();
    checked_ = false;
    return Status::OK();
  }

  Status BoundToNow() override {
    MessageLogState state;
    SPOOL_RETURN_IF_ERROR(LogState(&state));
    bound_ = state.last;
    return Status::OK();
  }

  Status Read(BatchContext&, Batch* batch, bool* more) override { return ReadRows(max_rows_, batch, more); }
  Status ReadAll(BatchContext&, Batch* batch) override {
    SPOOL_RETURN_IF_ERROR(BoundToNow());
    bool more = true;
    while (more) SPOOL_RETURN_IF_ERROR(ReadRows(std::numeric_limits<uint64_t>::max(), batch, &more));
    return Status::OK();
  }
  std::string NextOffset() const override { return FormatLogOffset(next_, incarnation_); }
  std::string ReadFromOffset() const override { return FormatLogOffset(read_from_, incarnation_); }
  void Committed() override {
    committed_ = LogOffset{next_, incarnation_};
    started_ = true;
  }
  bool ReadsAhead() const override { return true; }
  // "new" and a time resolve to where the stream stands when the flow
  // first reads: kept from then on, even before a message arrives.
  bool MovedWithoutRows() const override { return !started_ && checked_ && spec_.jetstream.start != StartAt::kFirst; }
  Backlog backlog() const override { return {"records", left_}; }

  // A replay reads again from the flow's offset at the point: the log must
  // still hold it, and be the log it was read from.
  Status CheckRetained(Store*, uint64_t, const std::string& offset, const stream_internal::StateTables&) override {
    LogOffset needed;
    SPOOL_RETURN_IF_ERROR(ParseLogOffset(offset, description_, &needed));
    if (offset.empty()) return Status::OK();
    MessageLogState state;
    SPOOL_RETURN_IF_ERROR(LogState(&state));
    if (needed.incarnation != state.incarnation) return Recreated(needed.incarnation, state);
    if (needed.next >= state.first) return Status::OK();
    return Status::InvalidArgument("the " + log_->name() + " no longer holds sequences " + std::to_string(needed.next) +
                                   " to " + std::to_string(state.first - 1) +
                                   ", which a replay from the point reads (the first it holds is " +
                                   std::to_string(state.first) + ")");
  }

  // What the table holds was read from `origin` (where its build began) to
  // `offset`; the sequences before the log's first are gone.
  Status FullRefreshLoss(Store*, const std::string& offset, const std::string& origin,
                         const stream_internal::StateTables&, std::string* loss) override {
    loss->clear();
    LogOffset end, from;
    SPOOL_RETURN_IF_ERROR(ParseLogOffset(offset, description_, &end));
    SPOOL_RETURN_IF_ERROR(ParseLogOffset(origin, description_, &from));
    if (offset.empty()) return Status::OK();
    MessageLogState state;
    SPOOL_RETURN_IF_ERROR(LogState(&state));
    if (end.incarnation != state.incarnation) {
      *loss = "the " + log_->name() + " was deleted and created again since the table was built: none of the " +
              "records it was built from (sequences up to " + std::to_string(end.next - 1) + ") is there any more";
      return Status::OK();
    }
    const uint64_t first = std::min(from.next == 0 ? 1 : from.next, end.next);
    const uint64_t kept_from = std::max(first, state.first);
    if (std::min(end.next, kept_from) == first) return Status::OK();
    const uint64_t last_gone = std::min(end.next, kept_from) - 1;
    *loss = "the " + log_->name() + " no longer holds sequences " + std::to_string(first) + " to " +
            std::to_string(last_gone) + " of the records the table was built from (sequences " + std::to_string(first) +
            " to " + std::to_string(end.next - 1) + ")";
    return Status::OK();
  }

 private:
  Status LogState(MessageLogState* state) {
    if (log_ == nullptr) SPOOL_RETURN_IF_ERROR(open_(&log_));
    Status s = log_->State(state);
    return s.WithContext(description_);
  }

  Status Recreated(const std::string& then, const MessageLogState& now) const {
    return Status::InvalidArgument("the " + log_->name() + " was deleted and created again since the flow read it " +
                                   "(incarnation " + then + ", now " + now.incarnation +
                                   "): its sequences started again, and reading on would take old positions for new "
                                   "messages; a full refresh of the flow's table, or a reset of its checkpoint, reads "
                                   "it anew");
  }

  // The log's state, checked against the committed offset: the same log
  // (not one created again), still holding the next sequence to read.
  Status CurrentState(MessageLogState* state) {
    SPOOL_RETURN_IF_ERROR(LogState(state));
    if (!started_) {
      incarnation_ = state->incarnation;
      return Status::OK();
    }
    if (committed_.incarnation != state->incarnation) return Recreated(committed_.incarnation, *state);
    incarnation_ = committed_.incarnation;
    if (committed_.next > state->last + 1) {
      return Status::InvalidArgument("the " + log_->name() + " holds sequences up to " + std::to_string(state->last) +
                                     ", but the flow has read up to " + std::to_string(committed_.next - 1) +
                                     ": it is not the log the flow read");
    }
    if (committed_.next < state->first) {
      return Status::InvalidArgument(
          "the " + log_->name() + " no longer holds sequences " + std::to_string(committed_.next) + " to " +
          std::to_string(state->first - 1) + ", which the flow has not read yet (the first it holds is " +
          std::to_string(state->first) + "): their records are lost to it; a full refresh reads what the log holds");
    }
    return Status::OK();
  }

  // Where a flow with no checkpoint starts.
  Status StartSequence(const MessageLogState& state, uint64_t* from) {
    const JetStreamSpec& js = spec_.jetstream;
    switch (js.start) {
      case StartAt::kFirst:
        *from = state.first;
        return Status::OK();
      case StartAt::kNew:
        *from = state.last + 1;
        return Status::OK();
      case StartAt::kSequence:
        *from = std::max(js.start_sequence, state.first);
        return Status::OK();
      case StartAt::kTime:
        return log_->SequenceAt(js.start_time_us, from).WithContext(description_);
    }
    return Status::OK();
  }

  // The records after the committed offset, at most `max_rows`, and no
  // further than the bound of a triggered update.
  Status ReadRows(uint64_t max_rows, Batch* batch, bool* more) {
    *more = false;
    if (!checked_) {  // once an update: later reads go on where the log's reader is
      MessageLogState state;
      SPOOL_RETURN_IF_ERROR(CurrentState(&state));
      if (!started_) SPOOL_RETURN_IF_ERROR(StartSequence(state, &start_));
      checked_ = true;
    }
    const uint64_t from = started_ ? committed_.next : start_;
    next_ = read_from_ = from;
    const uint64_t to = bound_;
    left_ = 0;
    if (from > to) return Status::OK();
    uint64_t pending = 0, read = 0;
    Row row;
    Status s = log_->Read(from, to, max_rows, 0, [&](const LogMessage& m) {
      Status parsed = parser_->ParseJson(m.data, &row);
      if (!parsed.ok()) return parsed.WithContext("sequence " + std::to_string(m.sequence));
      batch->rows.push_back(std::move(row));
      next_ = m.sequence + 1;
      pending = m.pending;
      ++read;
      return Status::OK();
    });
    SPOOL_RETURN_IF_ERROR(s.WithContext(description_));
    // Messages past a triggered update's bound are not its to read.
    *more = read == max_rows && pending > 0 && next_ <= to;
    left_ = *more ? std::min(pending, to - next_ + 1) : 0;
    return Status::OK();
  }

  SourceSpec spec_;
  std::string description_;
  Opener open_;
  std::unique_ptr<MessageLog> log_;
  uint64_t max_rows_ = 0;
  bool started_ = false;     // the checkpoint has an offset
  LogOffset committed_;      // the checkpoint's
  std::string incarnation_;  // of the log read
  uint64_t next_ = 0;        // after the last Read
  uint64_t read_from_ = 0;   // where the last Read began
  uint64_t left_ = 0;        // messages after the last Read
  bool checked_ = false;     // the log's state checked against the checkpoint, this update
  uint64_t start_ = 0;       // where a flow with no checkpoint starts, this update
  uint64_t bound_ = std::numeric_limits<uint64_t>::max();  // BoundToNow: the last sequence it reads
};

}  // namespace

Status MakeJetStreamSource(const SourceSpec& spec, const std::string& place, uint64_t max_rows,
                           std::unique_ptr<Source>* source) {
  auto log = std::make_unique<MessageLogSource>();
  const JetStreamSpec js = spec.jetstream;
  SPOOL_RETURN_IF_ERROR(log->Init(
      spec, "JetStream stream " + js.stream,
      [js](std::unique_ptr<MessageLog>* out) { return OpenJetStreamLog(js, out); }, place, max_rows));
  *source = std::move(log);
  return Status::OK();
}

}  // namespace spool::stream_internal
