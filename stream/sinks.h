// A sink (internal to stream/): a dataset's change data feed published to a
// message system, each change once, in commit order (docs/jetstream.md).
//
// Its progress is a row of the table kSinkProgressTable, committed to the
// store like any other change: `acked`, the version up to which every
// change is stored by the message system, and `pending`, the version up to
// which it may have published more. A round makes `pending` durable before
// it publishes anything (merged with the previous round's `acked`, so that
// it costs one commit), so that what the message system holds never goes
// past what the store knows of; the round's `acked` goes with the next
// round's commit or the update's end. A rewind leaves the table alone (the
// subscribers have seen what they have seen): its RESTORE commit then
// reaches them through the change feed, as the net change it made.
//
// After a crash the sink publishes (acked, pending] again: each message's
// id is its store, sink, version and place in that version, so the system
// drops what it stored already within its duplicate window, and the sink
// also skips what the subject's last message shows it stored (which
// covers a restart after the window).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "messaging.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline_spec.h"

namespace spool::stream_internal {

// What one round published.
struct SinkRound {
  uint64_t messages = 0;  // stored new (not duplicates)
  uint64_t from = 0;      // the versions it covered, when it published any
  uint64_t to = 0;
  // Said once an update, when the sink resumes a round a crash left
  // unfinished after longer than the system's duplicate window.
  std::string warning;
};

class SinkRunner {
 public:
  using Opener = std::function<Status(const std::string& subject, std::unique_ptr<MessagePublisher>*)>;

  // `dataset`: the table whose feed it publishes; `env`, its clock. `open`
  // connects.
  SinkRunner(const SinkSpec& spec, const TableId& dataset, Store* store, Env* env, Opener open);
  ~SinkRunner();

  const SinkSpec& spec() const { return spec_; }
  const std::string& subject() const { return subject_; }
  // The version up to which every change is stored by the message system.
  uint64_t published() const { return now_.acked; }

  // Before an update's first round: what it knew is read again from the
  // store and the message system.
  void Start();
  // Publishes the changes the dataset committed since the last round.
  // Errors: IOError (the message system out of reach: transient),
  // InvalidArgument (refused: another writer on the subject, a message over
  // the system's size limit, the log no longer holding what it has to
  // publish), Failed (a commit).
  Status Publish(const std::string& update_id, SinkRound* round);
  // Commits what the last round acknowledged, when it is not yet.
  Status Finish(const std::string& update_id);

  // The progress row's schema, and a sink's row.
  static const Schema& ProgressSchema();
  struct Progress {
    uint64_t acked = 0;
    uint64_t pending = 0;
    int64_t pending_since_us = 0;   // when `pending` was committed
    uint64_t subject_sequence = 0;  // the subject's last sequence when `acked` was
  };

 private:
  Status Resume(std::string* warning);
  Status Commit(const Progress& progress, const std::string& update_id);
  Status PublishVersions(uint64_t from, uint64_t to, SinkRound* round);

  const SinkSpec spec_;
  const TableId dataset_;
  Store* const store_;
  Env* const env_;
  const Opener open_;
  std::string subject_;
  std::string id_prefix_;  // "<store id>.<sink>."
  std::unique_ptr<MessagePublisher> publisher_;
  bool resumed_ = false;       // this update: progress read, the subject checked
  Progress stored_;            // as the store holds it
  Progress now_;               // acked and published by now
  uint64_t skip_version_ = 0;  // a crashed round's last stored message: skip up to it
  uint64_t skip_index_ = 0;
};

}  // namespace spool::stream_internal
