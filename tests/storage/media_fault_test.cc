// The media-fault campaign (the README's crash-safety section): a closed
// store with every kind of file — log segments, the state and a copy of
// it, snapshots, PINS, the event log, an archived cut, the marker — and a
// topic beside it, each file damaged in turn by a flipped bit, a cut or a
// zeroed page. Whatever the damage:
//  - no read returns a wrong row and nothing crashes: opening or reading
//    fails with an error, or everything reads as before;
//  - `spool verify` finds whatever opening or reading finds;
//  - where the log is intact, `spool repair` brings back a store that reads
//    exactly as before and verifies intact.
// A violation of any of these fails the test; the figures join the crash
// figures CI prints (family "media").
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "crash_enumerator.h"
#include "spool/stream/topic.h"
#include "table_fixture.h"

namespace spool {
namespace {

namespace fs = std::filesystem;
using crashtest::CrashFigures;

constexpr int kFaultKinds = 3;  // a flipped bit, a cut, a zeroed page
const char* const kFaultNames[kFaultKinds] = {"bit flipped", "cut", "page zeroed"};

StoreOptions RealOptions() {
  StoreOptions options;
  options.env = Env::Default();
  options.log.segment_size_bytes = 64 << 10;  // several sealed segments
  options.log.preallocate_bytes = 4 << 10;
  options.snapshot_every_versions = 0;
  options.snapshot_every_bytes = 0;
  options.state_batch_commits = 4;
  return options;
}

// What the store reads: its rows now, as of an older version, and as of a
// version a rewind cut (from the archive).
struct Reads {
  std::vector<Row> now, at_12, cut_23;
  std::vector<std::string> events;  // their ids, in order
  friend bool operator==(const Reads&, const Reads&) = default;
};

// Whether `got` is `all` less some of its newest entries.
template <typename T>
bool IsShortPrefix(const std::vector<T>& got, const std::vector<T>& all) {
  return got.size() < all.size() && std::equal(got.begin(), got.end(), all.begin());
}

TableId Users() { return Id("main.default.users"); }

Status ReadRows(Store* store, std::optional<uint64_t> version, std::vector<Row>* rows) {
  ReadOptions options;
  options.version = version;
  rows->clear();
  return store->Read(Users(), options, [&](const Row& row) {
    rows->push_back(row);
    return true;
  });
}

Status ReadAllOf(Store* store, Reads* reads) {
  std::vector<Event> events;
  SPOOL_RETURN_IF_ERROR(store->events()->Query(EventQuery{}, &events));
  reads->events.clear();
  for (const Event& e : events) reads->events.push_back(e.id);
  SPOOL_RETURN_IF_ERROR(ReadRows(store, std::nullopt, &reads->now));
  SPOOL_RETURN_IF_ERROR(ReadRows(store, 12, &reads->at_12));
  return ReadRows(store, 23, &reads->cut_23);
}

class MediaFaultTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new TempDir;
    expected_ = new Reads;
    expected_messages_ = new std::vector<std::string>;
    BuildStore(base_->Sub("store"));
    BuildTopic(base_->Sub("topic"));
  }
  static void TearDownTestSuite() {
    delete base_;
    delete expected_;
    delete expected_messages_;
  }

  static void Write(Store* store, int from, int to) {
    for (int i = from; i < to; ++i) {
      Transaction txn("WRITE");
      txn.Write(Users(), User(i % 17, "user-" + std::to_string(i) + std::string(2000, 'x')));
      if (i % 5 == 0) txn.Delete(Users(), Row{int64_t{(i + 3) % 17}});
      ASSERT_TRUE(store->Commit(txn).ok());
    }
  }

  // Versions: 1 creates the table; 2..25 write; a snapshot at 15, a pin at
  // 10, a state copy at 20; a rewind to 20 cuts 21..25 into the archive
  // and writes its RESTORE commit; 27..46 write; a snapshot at the end.
  static void BuildStore(const std::string& dir) {
    StoreOptions options = RealOptions();
    std::unique_ptr<Store> store;
    Status opened = Store::Open(options, dir, &store);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    Transaction create("CREATE TABLE");
    create.CreateTable(Users(), TableKind::kStreamingTable, UsersSchema(), {{"pipelines.reset.allowed", "true"}});
    ASSERT_TRUE(store->Commit(create).ok());
    Write(store.get(), 2, 15);
    ASSERT_TRUE(store->TakeSnapshot().ok());
    ASSERT_TRUE(store->AddPin("point", 10).ok());
    Write(store.get(), 15, 20);
    ASSERT_TRUE(store->SaveStateCopy().ok());
    Write(store.get(), 20, 25);
    ASSERT_TRUE(store->RewindTo(20).ok());
    Write(store.get(), 27, 47);
    ASSERT_TRUE(store->TakeSnapshot().ok());
    Event event;
    event.event_type = "media_fault_test";
    event.message = "an event in the event log";
    ASSERT_TRUE(store->events()->Append(&event).ok());
    store.reset();  // the events the close writes are part of what is read
    ASSERT_TRUE(Store::Open(options, dir, &store).ok());
    Status s = ReadAllOf(store.get(), expected_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_FALSE(expected_->cut_23.empty());  // the cut version reads from the archive
  }

  static void BuildTopic(const std::string& dir) {
    TopicConfig config;
    config.segment_size_bytes = kMinTopicSegmentBytes;
    ASSERT_TRUE(Topic::Create(Env::Default(), dir, config).ok());
    std::unique_ptr<Topic> topic;
    ASSERT_TRUE(Topic::Open(Env::Default(), dir, &topic).ok());
    for (int i = 0; i < 200; ++i) {
      const std::string value = "message-" + std::to_string(i) + std::string(600, 'm');
      expected_messages_->push_back(value);
      TopicWrite write;
      write.value = value;
      ASSERT_TRUE(topic->Produce(std::span<const TopicWrite>(&write, 1), nullptr).ok());
    }
  }

  // The files of each kind, relative to the base directory.
  static std::map<std::string, std::vector<std::string>> FilesByKind() {
    std::map<std::string, std::vector<std::string>> kinds;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(base_->path())) {
      if (!e.is_regular_file()) continue;
      const std::string path = fs::relative(e.path(), base_->path()).string();
      const std::string name = e.path().filename().string();
      if (name == "LOCK" || name == "lock.mdb") continue;
      std::string kind;
      if (path.starts_with("topic/")) kind = "topic segment";
      else if (path.starts_with("store/log/archive/")) kind = "archived cut";
      else if (path.starts_with("store/log/")) kind = name.ends_with(".seg") ? "log segment" : "log META";
      else if (path.starts_with("store/state/copies/")) kind = "state copy";
      else if (path.starts_with("store/state/")) kind = "state";
      else if (path.starts_with("store/snapshots/")) kind = "snapshot";
      else if (path.starts_with("store/events/")) kind = "event log";
      else if (name == "PINS") kind = "pins";
      else if (name == "STORE") kind = "marker";
      else continue;
      if (path.starts_with("topic/") && !name.ends_with(".seg")) continue;
      kinds[kind].push_back(path);
    }
    return kinds;
  }

  static void Damage(const std::string& path, int fault, std::mt19937_64& random) {
    std::string bytes;
    ASSERT_TRUE(ReadFileToString(Env::Default(), path, &bytes).ok());
    if (bytes.empty()) return;
    const size_t at = random() % bytes.size();
    if (fault == 0) bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
    if (fault == 1) bytes.resize(at);
    if (fault == 2) {
      const size_t page = at / 4096 * 4096;
      std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(page),
                bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), page + 4096)), '\0');
    }
    ASSERT_TRUE(WriteFileAtomically(Env::Default(), path, bytes).ok());
  }

  // One damaged copy of the store: checked, and repaired where it can be.
  void RunCase(const std::string& kind, const std::string& file, int fault, std::mt19937_64& random,
               CrashFigures* figures) {
    TempDir work;
    fs::copy(base_->path(), work.path(), fs::copy_options::recursive);
    Damage(work.Sub(file), fault, random);
    const std::string what = kind + " " + file + ": " + kFaultNames[fault];
    figures->media_faults++;
    auto violation = [&](const std::string& why) {
      figures->violations++;
      if (figures->failures.size() < 5) figures->failures.push_back(what + ": " + why);
      ADD_FAILURE() << what << ": " << why;
    };
    if (kind == "topic segment") {
      bool tail_dropped = false;
      const bool found = TopicFound(work.Sub("topic"), violation, &tail_dropped);
      Count(found, tail_dropped, figures);
      return;
    }
    const std::string dir = work.Sub("store");
    const StoreOptions options = RealOptions();
    VerifyReport report;
    Status verified = VerifyStore(options, dir, &report);
    const bool verify_found = !verified.ok() || report.damaged();
    bool found = false, tail_dropped = false;
    {
      std::unique_ptr<Store> store;
      Status opened = Store::Open(options, dir, &store);
      Reads reads;
      Status read = opened.ok() ? ReadAllOf(store.get(), &reads) : opened;
      // The event log's newest records cut or torn look like a write a
      // crash interrupted, and are dropped as one (docs/log_format.md,
      // "What recovery cannot tell apart").
      tail_dropped = read.ok() && IsShortPrefix(reads.events, expected_->events);
      if (tail_dropped) reads.events = expected_->events;
      if (read.ok() && !(reads == *expected_)) violation("read wrong rows or events");
      found = !read.ok();
      if (found && !verify_found) violation("verify found nothing, but: " + read.ToString());
    }
    Count(found || verify_found, tail_dropped, figures);

    const bool log_damaged = kind == "log segment" || kind == "log META" || kind == "marker";
    RepairReport repair;
    Status repaired = RepairStore(options, dir, &repair);
    if (log_damaged) {
      if (verify_found && repaired.ok()) violation("repaired a store whose log or marker is damaged");
      return;
    }
    if (!repaired.ok()) return violation("repair failed: " + repaired.ToString());
    std::unique_ptr<Store> store;
    Status opened = Store::Open(options, dir, &store);
    if (!opened.ok()) return violation("the repaired store does not open: " + opened.ToString());
    Reads reads;
    Status read = ReadAllOf(store.get(), &reads);
    if (kind == "archived cut" && read.IsNotFound()) {
      // The cut history was only in the damaged archive, which the repair
      // deleted: its versions say so; the rest reads as before.
      reads.cut_23 = expected_->cut_23;
      read = ReadRows(store.get(), 12, &reads.at_12);
      if (read.ok()) read = ReadRows(store.get(), std::nullopt, &reads.now);
    }
    if (kind == "event log" && read.ok() && tail_dropped && IsShortPrefix(reads.events, expected_->events)) {
      reads.events = expected_->events;  // the newest events, dropped as a torn tail before the repair
    }
    if (kind == "event log" && read.ok() && reads.events != expected_->events) {
      // A damaged event log is set aside, not rebuilt (nothing holds its
      // events but itself): a new one starts.
      bool set_aside = false;
      for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        set_aside |= e.path().filename().string().starts_with("events.damaged-");
      }
      if (!set_aside) violation("the events changed, and the damaged ones were not set aside");
      reads.events = expected_->events;
    }
    if (!read.ok() || !(reads == *expected_)) violation("the repaired store reads otherwise: " + read.ToString());
    store.reset();
    VerifyReport after;
    if (!VerifyStore(options, dir, &after).ok() || after.damaged()) violation("the repaired store does not verify");
  }

  static void Count(bool found, bool tail_dropped, CrashFigures* figures) {
    if (found) figures->media_faults_detected++;
    else if (tail_dropped) figures->media_faults_tail_dropped++;
    else figures->media_faults_no_effect++;
  }

  // Reads the whole topic: an error, or every message as it was (or, its
  // newest records cut, a prefix of them: *tail_dropped).
  template <typename Violation>
  bool TopicFound(const std::string& dir, const Violation& violation, bool* tail_dropped) {
    std::unique_ptr<Topic> topic;
    Status s = Topic::OpenForReading(Env::Default(), dir, &topic);
    if (!s.ok()) return true;
    std::vector<std::string> messages;
    s = topic->Read(0, TopicReadLimits{}, [&](const TopicMessage& m) {
      messages.emplace_back(m.value);
      return true;
    });
    if (!s.ok()) return true;
    *tail_dropped = IsShortPrefix(messages, *expected_messages_);
    if (!*tail_dropped && messages != *expected_messages_) violation("the topic read other messages");
    return false;
  }

  static TempDir* base_;
  static Reads* expected_;
  static std::vector<std::string>* expected_messages_;
};

TempDir* MediaFaultTest::base_ = nullptr;
Reads* MediaFaultTest::expected_ = nullptr;
std::vector<std::string>* MediaFaultTest::expected_messages_ = nullptr;

TEST_F(MediaFaultTest, EveryFileKindDamagedIsFoundOrHarmlessAndRepairedWhereTheLogIsIntact) {
  const char* env = std::getenv("SPOOL_MEDIA_CAMPAIGN_CASES");
  const int cases = env != nullptr ? std::atoi(env) : 20;  // per file kind and fault
  std::mt19937_64 random(36);
  const auto kinds = FilesByKind();
  for (const char* kind : {"log segment", "log META", "state", "state copy", "snapshot", "pins", "event log",
                           "archived cut", "marker", "topic segment"}) {
    ASSERT_TRUE(kinds.count(kind) != 0) << "the store has no " << kind;
  }
  for (const auto& [kind, files] : kinds) {
    CrashFigures figures;
    figures.workload = kind;
    for (int fault = 0; fault < kFaultKinds; ++fault) {
      for (int i = 0; i < cases; ++i) {
        RunCase(kind, files[random() % files.size()], fault, random, &figures);
        figures.crash_points++;
        figures.states_checked++;
      }
    }
    crashtest::PrintFigures("media", figures);
    EXPECT_EQ(figures.violations, 0u) << kind;
    EXPECT_GT(figures.media_faults_detected, 0u) << kind;
  }
}

}  // namespace
}  // namespace spool
