// Sources: another dataset's committed changes, a directory of files, a
// topic. Each reads micro-batches after its committed offset.
#include <algorithm>
#include <limits>
#include <set>

#include "json_reader.h"
#include "operators_internal.h"
#include "record_source.h"
#include "spool/stream/records.h"
#include "spool/stream/topic.h"

namespace spool::stream_internal {
namespace {

// The stream of a dataset's commits, whole commits at a time, after the
// version recorded as the offset: from the table's creation on, or, when
// the log no longer holds it, from a snapshot of the table as it is (as
// Delta's streaming source starts).
// An append-only table yields its appended rows; a keyed one its change feed,
// with _change_type, _commit_version and _commit_timestamp.
class DatasetSource : public Source {
 public:
  // `as_table`: a materialized view's input, read whole, as the table's rows.
  // `target`: the dataset the reading flow writes.
  Status Init(const SourceSpec& spec, const TableInfo& table, const TableId& target, bool as_table) {
    spec_ = spec;
    target_ = target.ToString();
    as_table_ = as_table;
    keyed_ = table.schema.has_key() && !as_table;
    std::vector<Column> columns = table.schema.columns();
    if (keyed_) {
      columns.push_back({"_change_type", ColumnType::kString, false});
      columns.push_back({"_commit_version", ColumnType::kInt64, false});
      columns.push_back({"_commit_timestamp", ColumnType::kTimestamp, false});
    }
    Status s = Schema::Make(std::move(columns), {}, &schema_);
    if (!s.ok()) return Status::InvalidArgument("source dataset " + spec.dataset + ": " + std::string(s.message()));
    return TableId::Parse(spec.dataset, &id_);
  }

  const Schema& schema() const override { return schema_; }

  Status Start(Store* store, const std::string& offset, const stream_internal::StateTables&) override {
    store_ = store;
    started_ = !offset.empty();
    SPOOL_RETURN_IF_ERROR(ParseOffset(offset, "source dataset " + id_.ToString(), &committed_));
    next_ = committed_;
    rewound_.clear();
    rewound_loaded_ = false;
    // Now, before the flows upstream write this update's commits, which a
    // lookup at the first Read would decode twice. (A materialized view's
    // input is read whole: nothing to skip. A flow starting afresh looks
    // once it knows where it starts.)
    if (started_ && !as_table_) SPOOL_RETURN_IF_ERROR(LoadRewoundRanges());
    return Status::OK();
  }

  Status Read(BatchContext&, Batch* batch, bool* more) override {
    *more = false;
    const VersionRange range = store_->AvailableVersions();
    if (!started_) {
      bool snapshot = false;
      SPOOL_RETURN_IF_ERROR(FindStart(range, &snapshot));
      if (snapshot) return Snapshot(range.newest, batch);
    }
    next_ = committed_;
    newest_ = range.newest;
    if (range.newest <= committed_) return Status::OK();
    TableInfo table;
    SPOOL_RETURN_IF_ERROR(store_->GetTable(id_, &table));
    if (store_->LastChangeBound(table) <= committed_) {
      next_ = range.newest;  // nothing of this table since: no need to look
      return Status::OK();
    }
    if (committed_ + 1 < range.oldest) {
      return Status::InvalidArgument("source dataset " + spec_.dataset + ": version " + std::to_string(committed_ + 1) +
                                     " it continues from is no longer retained (oldest: " +
                                     std::to_string(range.oldest) + "); a full refresh is needed");
    }
    if (!rewound_loaded_) SPOOL_RETURN_IF_ERROR(LoadRewoundRanges());
    return ReadCommits(range, batch, more);
  }
  Backlog backlog() const override { return {"versions", newest_ > next_ ? newest_ - next_ : 0}; }
  uint64_t uncommitted_versions() const override { return next_ > committed_ ? next_ - committed_ : 0; }

  std::string NextOffset() const override { return std::to_string(next_); }
  void Committed() override {
    committed_ = next_;
    started_ = true;
  }
  Status ReadAll(BatchContext&, Batch* batch) override { return Snapshot(store_->AvailableVersions().newest, batch); }
  void set_max_rows(uint64_t rows) { max_rows_ = rows; }

 private:
  // Where a flow reading the table afresh starts: from the table's first
  // commit while the log retains it, so batches follow its commits;
  // otherwise, or when rows of the append-only table were ever removed (a
  // full refresh truncated it, a rewind restored it), from a snapshot of
  // it as it is (`*snapshot`).
  Status FindStart(const VersionRange& range, bool* snapshot) {
    TableInfo table;
    SPOOL_RETURN_IF_ERROR(store_->GetTable(id_, &table));
    bool removed = false;
    if (!keyed_) SPOOL_RETURN_IF_ERROR(EverRemovedRows(&removed));
    if (table.created_version() < range.oldest || removed) {
      *snapshot = true;
      return Status::OK();
    }
    committed_ = table.created_version() - 1;
    started_ = true;
    return Status::OK();
  }

  // The table's changes after the committed version up to range.newest,
  // in whole commits: the batch ends at the first commit boundary past
  // max_rows (`*more`). A commit that updates or deletes rows fails an
  // append-only stream, unless skip_change_commits skips it.
  Status ReadCommits(const VersionRange& range, Batch* batch, bool* more) {
    std::vector<Row> commit;
    uint64_t commit_version = 0;
    bool has_changes = false;  // the commit updates or deletes rows
    Status failed;
    auto finish_commit = [&]() {
      if (commit_version == 0) return;
      if (has_changes && !spec_.skip_change_commits && !keyed_) {
        failed = Status::InvalidArgument(
            "source dataset " + spec_.dataset + " changed in version " + std::to_string(commit_version) +
            " by an update or delete, which an append-only stream cannot follow; set skip_change_commits on the "
            "source or run a full refresh");
        return;
      }
      if (!(has_changes && spec_.skip_change_commits)) {
        for (Row& row : commit) batch->rows.push_back(std::move(row));
      }
      next_ = commit_version;
      commit.clear();
      has_changes = false;
    };
    Status s = store_->Changes(id_, committed_ + 1, range.newest, [&](const ChangeRow& change) {
      if (Rewound(change.commit_version)) return true;
      if (change.commit_version != commit_version) {
        finish_commit();
        if (!failed.ok()) return false;
        if (max_rows_ != 0 && batch->rows.size() >= max_rows_) {
          *more = true;
          return false;
        }
        commit_version = change.commit_version;
      }
      has_changes = has_changes || change.change_type != ChangeType::kInsert;
      Row row = change.row;
      if (keyed_) {
        row.push_back(std::string(ChangeTypeName(change.change_type)));
        row.push_back(static_cast<int64_t>(change.commit_version));
        row.push_back(Timestamp{static_cast<int64_t>(change.commit_timestamp_us)});
      }
      commit.push_back(std::move(row));
      return true;
    });
    if (s.ok() && !*more) finish_commit();
    SPOOL_RETURN_IF_ERROR(failed);
    if (!*more && failed.ok()) next_ = range.newest;
    newest_ = range.newest;
    return s;
  }

  Status EverRemovedRows(bool* removed) {
    std::vector<HistoryEntry> history;
    SPOOL_RETURN_IF_ERROR(store_->History(id_, &history));
    *removed = std::any_of(history.begin(), history.end(), [](const HistoryEntry& h) {
      auto deleted = h.metrics.find("numDeletedRows");
      return deleted != h.metrics.end() && deleted->second > 0;
    });
    return Status::OK();
  }

  // A rewind of some datasets that restored this table and the target
  // together to version v, in one RESTORE commit at version r, took the
  // table's commits (v, r] back from the target too: the flow skips them,
  // the restore included, so the target holds each upstream row once
  // (docs/design.md). Rewinds happen between updates, so the restores after
  // the offset are looked up once per update, as it starts.
  Status LoadRewoundRanges() {
    std::vector<HistoryEntry> history;
    SPOOL_RETURN_IF_ERROR(store_->History(id_, &history, 0, committed_ + 1));
    for (const HistoryEntry& h : history) {
      if (h.operation != "RESTORE") continue;
      const json parameters = json::parse(h.parameters_json, nullptr, /*allow_exceptions=*/false);
      if (!parameters.is_object() || !parameters.contains("tables") || !parameters["tables"].is_array()) continue;
      const json& tables = parameters["tables"];
      if (std::find(tables.begin(), tables.end(), target_) == tables.end()) continue;
      rewound_.push_back({parameters.value("version", uint64_t{0}), h.version});
    }
    rewound_loaded_ = true;
    return Status::OK();
  }
  bool Rewound(uint64_t version) const {
    for (const auto& [from, restore] : rewound_) {
      if (version > from && version <= restore) return true;
    }
    return false;
  }

  Status Snapshot(uint64_t version, Batch* batch) {
    ReadOptions options;
    options.version = version;
    uint64_t read = 0;
    SPOOL_RETURN_IF_ERROR(store_->Read(
        id_, options,
        [&](const Row& row) {
          Row out = row;
          if (keyed_) {
            out.push_back(std::string("insert"));
            out.push_back(static_cast<int64_t>(version));
            out.push_back(Timestamp{0});
          }
          batch->rows.push_back(std::move(out));
          return true;
        },
        nullptr, &read));
    if (keyed_) {
      VersionRange range = store_->AvailableVersions();
      for (Row& row : batch->rows) row.back() = Timestamp{static_cast<int64_t>(range.newest_timestamp_us)};
    }
    next_ = version;
    return Status::OK();
  }

  SourceSpec spec_;
  TableId id_;
  std::string target_;
  bool as_table_ = false;
  // (restored to, restore commit] ranges of versions skipped (above).
  std::vector<std::pair<uint64_t, uint64_t>> rewound_;
  bool rewound_loaded_ = false;
  Schema schema_;
  bool keyed_ = false;
  Store* store_ = nullptr;
  bool started_ = false;
  uint64_t committed_ = 0;
  uint64_t next_ = 0;
  uint64_t newest_ = 0;  // the store's newest version at the last Read
  uint64_t max_rows_ = 0;
};

// A directory of JSON-lines or CSV files, each read once, in name order.
// The names read are state (one row each), committed with the rows they
// gave. A file must be complete when it appears under its name: write it
// under a name starting with '.' or '_' (skipped) and rename it.
class FileSource : public RecordSource {
 public:
  Status Init(const SourceSpec& spec, Env* env, const std::string& place, uint64_t max_files, uint64_t max_rows) {
    spec_ = spec;
    env_ = env;
    max_files_ = max_files;
    max_rows_ = max_rows;
    SPOOL_RETURN_IF_ERROR(InitRecords(spec, spec.path, place));  // the parser names each file it reads
    return MakeSchema({{"file", ColumnType::kString, false}, {"bytes", ColumnType::kInt64, false}}, {"file"}, place,
                      &state_schema_);
  }
  std::vector<StateTableSpec> StateTables() const override { return {{"files", state_schema_}}; }

  Status Start(Store* store, const std::string& offset, const stream_internal::StateTables& tables) override {
    state_id_ = tables.ids[0];
    read_.clear();
    listed_.clear();
    listed_pos_ = next_pos_ = 0;
    bounded_ = false;
    SPOOL_RETURN_IF_ERROR(ParseOffset(offset, "files source " + spec_.path, &committed_files_));
    TableInfo info;
    if (!store->GetTable(state_id_, &info).ok()) return Status::OK();  // created with the first batch
    return store->Read(state_id_, {}, [&](const Row& row) {
      read_.insert(std::get<std::string>(row[0]));
      return true;
    });
  }

  Status BoundToNow() override {
    bounded_ = true;
    return List();
  }
  Status Read(BatchContext& ctx, Batch* batch, bool* more) override { return ReadFiles(ctx, batch, more, true); }
  std::string NextOffset() const override { return std::to_string(committed_files_ + taken_.size()); }
  void Committed() override {
    committed_files_ += taken_.size();
    read_.insert(taken_.begin(), taken_.end());
    taken_.clear();
    listed_pos_ = next_pos_;
  }
  Status ReadAll(BatchContext& ctx, Batch* batch) override {
    bool more = false;
    SPOOL_RETURN_IF_ERROR(List());
    return ReadFiles(ctx, batch, &more, false);
  }
  Backlog backlog() const override { return {"files", listed_.size() - next_pos_}; }

  // A replay reads again the files read after `version`: they must still
  // be in the directory.
  Status CheckRetained(Store* store, uint64_t version, const std::string&,
                       const stream_internal::StateTables& tables) override {
    TableInfo info;
    if (!store->GetTable(tables.ids[0], &info).ok()) return Status::OK();  // nothing read yet
    std::set<std::string> then;
    ReadOptions at;
    at.version = version;
    if (info.created_version() <= version) {
      SPOOL_RETURN_IF_ERROR(store->Read(tables.ids[0], at, [&](const Row& row) {
        then.insert(std::get<std::string>(row[0]));
        return true;
      }));
    }
    std::vector<std::string> gone;
    SPOOL_RETURN_IF_ERROR(store->Read(tables.ids[0], {}, [&](const Row& row) {
      const std::string& name = std::get<std::string>(row[0]);
      if (then.count(name) == 0 && !env_->FileExists(spec_.path + "/" + name)) gone.push_back(name);
      return true;
    }));
    if (gone.empty()) return Status::OK();
    return Status::InvalidArgument("the directory " + spec_.path + " no longer holds " + std::to_string(gone.size()) +
                                   " file(s) read after the point (" + gone.front() + (gone.size() > 1 ? ", …" : "") +
                                   "): a replay would lose their rows");
  }

  // The files its state table lists were read since the flow's last reset.
  Status FullRefreshLoss(Store* store, const std::string&, const std::string&,
                         const stream_internal::StateTables& tables, std::string* loss) override {
    loss->clear();
    TableInfo info;
    if (!store->GetTable(tables.ids[0], &info).ok()) return Status::OK();  // nothing read yet
    uint64_t read = 0, gone = 0;
    std::string first;
    SPOOL_RETURN_IF_ERROR(store->Read(tables.ids[0], {}, [&](const Row& row) {
      const std::string& name = std::get<std::string>(row[0]);
      ++read;
      if (!env_->FileExists(spec_.path + "/" + name)) {
        if (gone++ == 0) first = name;
      }
      return true;
    }));
    if (gone == 0) return Status::OK();
    *loss = "the directory " + spec_.path + " no longer holds " + std::to_string(gone) + " of the " +
            std::to_string(read) + " files read (" + first + (gone > 1 ? ", …" : "") + ")";
    return Status::OK();
  }

 private:
  // The names not read yet, in order. A listing serves the batches that
  // drain it; the directory is listed again once it is (not in a bounded
  // update, which reads no file that appeared after it began).
  Status List() {
    std::vector<std::string> names;
    Status s = env_->ListDir(spec_.path, &names);
    if (!s.ok()) return s.WithContext("files source " + spec_.path);
    std::sort(names.begin(), names.end());
    listed_.clear();
    for (std::string& name : names) {
      if (!name.empty() && name[0] != '.' && name[0] != '_' && read_.count(name) == 0)
        listed_.push_back(std::move(name));
    }
    listed_pos_ = next_pos_ = 0;
    return Status::OK();
  }

  Status ReadFiles(BatchContext& ctx, Batch* batch, bool* more, bool bounded) {
    taken_.clear();
    if (listed_pos_ >= listed_.size() && !bounded_) SPOOL_RETURN_IF_ERROR(List());
    size_t pos = listed_pos_;
    for (; pos < listed_.size(); ++pos) {
      if (bounded &&
          ((max_files_ != 0 && taken_.size() >= max_files_) || (max_rows_ != 0 && batch->rows.size() >= max_rows_))) {
        break;
      }
      const std::string& name = listed_[pos];
      const std::string path = spec_.path + "/" + name;
      std::string data;
      SPOOL_RETURN_IF_ERROR(ReadWholeFile(path, &data));
      SPOOL_RETURN_IF_ERROR(parser_->Read(data, path, [&](Row&& row, uint64_t) {
        batch->rows.push_back(std::move(row));
        return Status::OK();
      }));
      ctx.txn->Write(state_id_, {name, static_cast<int64_t>(data.size())});
      taken_.push_back(name);
    }
    next_pos_ = pos;
    *more = pos < listed_.size();
    return Status::OK();
  }

  Status ReadWholeFile(const std::string& path, std::string* data) {
    std::unique_ptr<File> file;
    uint64_t size = 0;
    Status s = env_->OpenFile(path, OpenMode::kReadOnly, &file);
    if (s.ok()) s = file->Size(&size);
    if (s.ok()) s = file->Read(0, size, data);
    if (s.ok() && data->size() != size) s = Status::IOError("short read");
    return s.WithContext("files source: " + path);
  }

  SourceSpec spec_;
  Env* env_ = nullptr;
  uint64_t max_files_ = 0;
  uint64_t max_rows_ = 0;
  Schema state_schema_;
  TableId state_id_;
  std::set<std::string> read_;       // committed
  std::vector<std::string> listed_;  // unread when listed, in name order
  size_t listed_pos_ = 0;            // the first not committed since
  size_t next_pos_ = 0;              // after what the last Read took
  bool bounded_ = false;
  std::vector<std::string> taken_;  // by the last Read
  uint64_t committed_files_ = 0;
};

// A topic (topic.h), from its oldest retained message on. The offset is
// the next message's. The topic is opened for reading only, so producers in
// this process or others can keep writing to it. A cursor reads batch after
// batch without searching for each batch's first offset.
class TopicSource : public RecordSource {
 public:
  Status Init(const SourceSpec& spec, Env* env, const std::string& place, uint64_t max_rows) {
    spec_ = spec;
    env_ = env;
    max_rows_ = max_rows == 0 ? std::numeric_limits<uint64_t>::max() : max_rows;
    return InitRecords(spec, "topic " + spec.path, place);
  }

  Status Start(Store*, const std::string& offset, const stream_internal::StateTables&) override {
    started_ = !offset.empty();
    SPOOL_RETURN_IF_ERROR(ParseOffset(offset, "topic " + spec_.path, &committed_));
    next_ = committed_;
    bound_ = std::numeric_limits<uint64_t>::max();
    cursor_.reset();
    reader_.reset();
    resume_ = TopicPosition{};
    return Status::OK();
  }

  Status BoundToNow() override {
    SPOOL_RETURN_IF_ERROR(OpenReader());
    bound_ = reader_->Info().next_offset;
    return Status::OK();
  }
  Status Read(BatchContext&, Batch* batch, bool* more) override { return ReadFrom(max_rows_, batch, more); }
  std::string NextOffset() const override { return std::to_string(next_); }
  std::string ReadFromOffset() const override { return std::to_string(read_from_); }
  void Committed() override {
    committed_ = next_;
    started_ = true;
  }
  bool ReadsAhead() const override { return true; }
  Status ReadAll(BatchContext&, Batch* batch) override {
    bool more = false;
    return ReadFrom(std::numeric_limits<uint64_t>::max(), batch, &more);
  }
  Backlog backlog() const override { return {"records", left_}; }

  // A replay reads again from the flow's offset at the point: the topic must
  // still retain it.
  Status CheckRetained(Store*, uint64_t, const std::string& offset, const stream_internal::StateTables&) override {
    uint64_t oldest = 0;
    SPOOL_RETURN_IF_ERROR(Topic::OldestOffset(env_, spec_.path, &oldest));
    uint64_t needed = 0;
    SPOOL_RETURN_IF_ERROR(ParseOffset(offset, "topic " + spec_.path, &needed));
    if (needed >= oldest) return Status::OK();
    return Status::InvalidArgument("the topic " + spec_.path + " no longer retains offsets " + std::to_string(needed) +
                                   " to " + std::to_string(oldest - 1) +
                                   ", which a replay from the point reads (its oldest retained offset is " +
                                   std::to_string(oldest) + ")");
  }

  // The records from `origin` (where the table's build began) to `offset`
  // are what the table holds now; those before the topic's oldest are gone.
  Status FullRefreshLoss(Store*, const std::string& offset, const std::string& origin,
                         const stream_internal::StateTables&, std::string* loss) override {
    loss->clear();
    std::unique_ptr<Topic> reader;
    SPOOL_RETURN_IF_ERROR(Topic::OpenForReading(env_, spec_.path, &reader));
    uint64_t end = 0, from = 0;
    SPOOL_RETURN_IF_ERROR(ParseOffset(offset, "topic " + spec_.path, &end));
    SPOOL_RETURN_IF_ERROR(ParseOffset(origin, "topic " + spec_.path, &from));
    from = std::min(end, from);
    const uint64_t kept_from = std::max(from, reader->Info().oldest_offset);
    const uint64_t gone = std::min(end, kept_from) - from;
    if (gone == 0) return Status::OK();
    *loss = "the topic " + spec_.path + " no longer holds " + std::to_string(gone) + " of the " +
            std::to_string(end - from) + " records the table was built from (offsets " + std::to_string(from) + " to " +
            std::to_string(from + gone - 1) + ")";
    return Status::OK();
  }

 private:
  // Sees what producers added: the reader takes in the new records, or,
  // when it cannot (the topic started a new segment), the topic is opened
  // again and the next cursor resumes where this one stopped.
  Status OpenReader() {
    bool stale = true;
    if (reader_ != nullptr) SPOOL_RETURN_IF_ERROR(reader_->Refresh(&stale));
    if (!stale) return Status::OK();
    return ReopenReader();
  }
  Status ReopenReader() {
    if (cursor_ != nullptr) resume_ = cursor_->position();
    cursor_.reset();
    reader_.reset();
    return Topic::OpenForReading(env_, spec_.path, &reader_);
  }

  // The cursor that read the last batch goes on where it stopped. A new one
  // resumes from the last one's position when that is `from` (the topic
  // was opened again to see new messages), else searches for `from` (the
  // first batch, or a batch read again because the last was not committed).
  Status PositionCursor(uint64_t from) {
    if (cursor_ != nullptr && cursor_->position().offset == from) return Status::OK();
    cursor_.reset();
    if (resume_.offset == from) return reader_->ResumeCursor(resume_, &cursor_);
    return reader_->NewCursor(from, &cursor_);
  }

  // A reader sees the topic as it was when opened: it serves batches until
  // they reach its end, and is opened again then (or when retention by a
  // producer removed what it was reading).
  Status ReadFrom(uint64_t max_rows, Batch* batch, bool* more) {
    const uint64_t from = started_ ? committed_ : 0;
    if (reader_ == nullptr || from >= reader_->Info().next_offset) SPOOL_RETURN_IF_ERROR(OpenReader());
    const size_t rows_before = batch->rows.size();
    Status s = ReadWith(from, max_rows, batch, more);
    if (!s.ok() && !s.IsOutOfRange() && !s.IsInvalidArgument()) {
      batch->rows.resize(rows_before);
      SPOOL_RETURN_IF_ERROR(ReopenReader());
      s = ReadWith(from, max_rows, batch, more);
    }
    return s;
  }

  Status ReadWith(uint64_t committed, uint64_t max_rows, Batch* batch, bool* more) {
    const TopicInfo info = reader_->Info();
    const uint64_t end = std::min(info.next_offset, bound_);
    const uint64_t from = started_ ? committed : info.oldest_offset;
    next_ = from;
    read_from_ = from;
    *more = false;
    left_ = end > from ? end - from : 0;
    if (from >= end) return Status::OK();
    SPOOL_RETURN_IF_ERROR(PositionCursor(from));
    Status parsed;
    Row row;
    TopicReadLimits limits;
    limits.max_messages = std::min(max_rows, end - from);
    SPOOL_RETURN_IF_ERROR(cursor_->Read(limits, [&](const TopicMessage& m) {
      parsed = parser_->ParseJson(m.value, &row);
      if (!parsed.ok()) {
        parsed = parsed.WithContext("offset " + std::to_string(m.offset));
        return false;
      }
      batch->rows.push_back(std::move(row));
      next_ = m.offset + 1;
      return true;
    }));
    SPOOL_RETURN_IF_ERROR(parsed);
    *more = next_ < end;
    left_ = end - next_;
    return Status::OK();
  }

  SourceSpec spec_;
  Env* env_ = nullptr;
  uint64_t max_rows_ = 0;
  std::unique_ptr<Topic> reader_;        // OpenForReading
  std::unique_ptr<TopicCursor> cursor_;  // of reader_, after the last message read
  TopicPosition resume_;                 // where the cursor of the last reader stopped
  bool started_ = false;
  uint64_t committed_ = 0;
  uint64_t next_ = 0;
  uint64_t read_from_ = 0;                                 // where the last Read began
  uint64_t left_ = 0;                                      // messages after the last Read
  uint64_t bound_ = std::numeric_limits<uint64_t>::max();  // BoundToNow: no message from this offset on
};

}  // namespace

Status MakeTopicSource(const SourceSpec& spec, Env* env, const std::string& place, uint64_t max_rows,
                       std::unique_ptr<Source>* source) {
  auto topic = std::make_unique<TopicSource>();
  SPOOL_RETURN_IF_ERROR(topic->Init(spec, env, place, max_rows));
  *source = std::move(topic);
  return Status::OK();
}

Status RecordSchema(const SourceSpec& spec, const std::string& place, Schema* schema) {
  std::vector<Column> columns = spec.columns;
  if (spec.bad_records == BadRecords::kRescue) {
    for (const Column& c : columns) {
      if (!c.nullable) {
        return Status::InvalidArgument(place + ": column '" + c.name +
                                       "' must be nullable: with bad_records rescue a record's unreadable fields "
                                       "become NULL");
      }
    }
    columns.push_back({std::string(kRescueColumn), ColumnType::kString, true});
  }
  return MakeSchema(std::move(columns), {}, place, schema);
}

Status MakeDatasetSource(const SourceSpec& spec, const TableInfo& table, const TableId& target, uint64_t max_rows,
                         bool as_table, std::unique_ptr<Source>* source) {
  auto dataset = std::make_unique<DatasetSource>();
  SPOOL_RETURN_IF_ERROR(dataset->Init(spec, table, target, as_table));
  dataset->set_max_rows(max_rows);
  *source = std::move(dataset);
  return Status::OK();
}

Status MakeFileSource(const SourceSpec& spec, Env* env, const std::string& place, uint64_t max_files, uint64_t max_rows,
                      std::unique_ptr<Source>* source) {
  auto files = std::make_unique<FileSource>();
  SPOOL_RETURN_IF_ERROR(files->Init(spec, env, place, max_files, max_rows));
  *source = std::move(files);
  return Status::OK();
}

}  // namespace spool::stream_internal
