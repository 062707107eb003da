// Spool's table API as a VersionedEngine: one keyed table in a Store with
// default StoreOptions (log durability kSync, state applied to LMDB in
// background batches, automatic snapshots), read with Store::Scan (rows in
// place, as the peers' reads hand out their bytes).
#include <filesystem>
#include <variant>

#include "engine.h"
#include "files.h"
#include "spool/storage/store.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

const TableId& BenchTable() {
  static const TableId id{"bench", "tables", "rows"};
  return id;
}

Status BenchSchema(Schema* schema) {
  return Schema::Make({Column{"key", ColumnType::kBytes, false}, Column{"value", ColumnType::kBytes, false}}, {"key"},
                      schema);
}

// A row as Scan hands it over, in place: the key and value columns' bytes.
Status VisitRow(const RowView& row, const RowVisitor& visit) {
  if (row.size() != 2 || row.IsNull(0) || row.IsNull(1)) {
    return Status::Corruption("spool read a row that is not (bytes, bytes)");
  }
  visit(row.Chars(0), row.Chars(1));
  return Status::OK();
}

class SpoolTableEngine final : public VersionedEngine {
 public:
  ~SpoolTableEngine() override { (void)Close(); }

  std::string_view name() const override { return kSpool; }

  Status Open(const std::string& dir) override {
    dir_ = dir;
    SPOOL_RETURN_IF_ERROR(Store::Open(SpoolStoreOptions(), dir, &store_));
    TableInfo table;
    Status found = store_->GetTable(BenchTable(), &table);
    if (!found.IsNotFound()) return found;
    Schema schema;
    SPOOL_RETURN_IF_ERROR(BenchSchema(&schema));
    Transaction txn("CREATE TABLE");
    txn.CreateTable(BenchTable(), TableKind::kStreamingTable, std::move(schema));
    CommitResult result;
    SPOOL_RETURN_IF_ERROR(store_->Commit(txn, &result));
    if (result.version + 1 != kFirstDataVersion) {
      return Status::InvalidArgument("spool created the table at version " + std::to_string(result.version));
    }
    return Status::OK();
  }

  Status Commit(uint64_t version, std::span<const Record> rows) override {
    // Built per call, as a user of the API would.
    Transaction txn;
    for (const Record& r : rows) txn.Write(BenchTable(), Row{Bytes{std::string(r.key)}, Bytes{std::string(r.value)}});
    CommitResult result;
    SPOOL_RETURN_IF_ERROR(store_->Commit(txn, &result));
    return ExpectVersion(result, version);
  }

  Status ReadAsOf(uint64_t version, const RowVisitor& visit) override {
    ReadOptions options;
    options.version = version;
    return Read(options, visit);
  }

  Status ReadLatest(const RowVisitor& visit) override { return Read(ReadOptions{}, visit); }

  // A pipeline's rewind point: a durable pin (vacuum keeps the version) and
  // a copy of the state at it, which the rewind adopts instead of
  // rebuilding the state.
  Status MarkRewindPoint(const std::string& /*point_dir*/) override {
    point_ = store_->log()->Newest().version;
    SPOOL_RETURN_IF_ERROR(store_->AddPin("w6-point", point_));
    return store_->SaveStateCopy();
  }

  uint64_t RewindPointBytes() override {
    const std::string copies = dir_ + "/state/copies";
    return std::filesystem::exists(copies) ? DiskBytes(copies) : 0;
  }

  Status Rewind(RewindTimes* times) override {
    Stopwatch watch;
    SPOOL_RETURN_IF_ERROR(store_->RewindTo(point_));
    times->restore_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Close());
    times->close_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Store::Open(SpoolStoreOptions(), dir_, &store_));
    times->open_s = watch.Seconds();
    return Status::OK();
  }

  Status Close() override {
    store_.reset();  // flushes the staged state to LMDB
    return Status::OK();
  }

  Status ScanChanges(uint64_t from, uint64_t to, const ChangeVisitor& visit) override {
    Status visited;
    SPOOL_RETURN_IF_ERROR(store_->Changes(BenchTable(), from + 1, to, [&](const ChangeRow& change) {
      // An upsert of an existing row is a pre-image and a post-image; a
      // change is the row a commit wrote, as the peers' entries are.
      if (change.change_type == ChangeType::kUpdatePreimage) return true;
      const Row& row = change.row;
      if (row.size() != 2 || !std::holds_alternative<Bytes>(row[0]) || !std::holds_alternative<Bytes>(row[1])) {
        visited = Status::Corruption("spool's change feed returned a row that is not (bytes, bytes)");
        return false;
      }
      visit(change.commit_version, std::get<Bytes>(row[0]).data, std::get<Bytes>(row[1]).data);
      return true;
    }));
    return visited;
  }

  Status TakeSnapshot(const std::string& /*snapshot_dir*/) override { return store_->TakeSnapshot(); }

  Status RestoreAsNewVersion(uint64_t version, uint64_t new_version) override {
    CommitResult result;
    SPOOL_RETURN_IF_ERROR(store_->Restore(BenchTable(), version, &result));
    return ExpectVersion(result, new_version);
  }

  Status Vacuum(uint64_t floor) override {
    // A pin holds the floor; retention 0 lets everything older go.
    constexpr char kPin[] = "spool-bench-vacuum";
    SPOOL_RETURN_IF_ERROR(store_->AddPin(kPin, floor));
    VacuumOptions options;
    options.retain_us = 0;
    options.force = true;
    VacuumReport report;
    Status vacuumed = store_->Vacuum(options, &report);
    SPOOL_RETURN_IF_ERROR(store_->RemovePin(kPin));
    SPOOL_RETURN_IF_ERROR(vacuumed);
    if (report.floor_version != floor) {
      return Status::InvalidArgument("spool's vacuum kept from version " + std::to_string(report.floor_version) +
                                     ", the workload asked for " + std::to_string(floor));
    }
    return Status::OK();
  }

 private:
  static Status ExpectVersion(const CommitResult& result, uint64_t version) {
    if (result.version == version) return Status::OK();
    return Status::InvalidArgument("spool committed version " + std::to_string(result.version) +
                                   ", the workload expected " + std::to_string(version));
  }

  Status Read(const ReadOptions& options, const RowVisitor& visit) {
    Status visited;
    SPOOL_RETURN_IF_ERROR(store_->Scan(BenchTable(), options, [&](const RowView& row) {
      visited = VisitRow(row, visit);
      return visited.ok();
    }));
    return visited;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  uint64_t point_ = 0;
};

}  // namespace

std::unique_ptr<VersionedEngine> NewSpoolTableEngine() { return std::make_unique<SpoolTableEngine>(); }

}  // namespace spool::bench
