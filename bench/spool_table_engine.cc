// Spool's table API as a VersionedEngine: one keyed table in a Store with
// default StoreOptions (log durability kSync, state applied to LMDB in
// background batches, automatic snapshots), read with Store::Scan (rows in
// place, as the peers' reads hand out their bytes).
#include <variant>

#include "engine.h"
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
    SPOOL_RETURN_IF_ERROR(Store::Open(StoreOptions{}, dir, &store_));
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
    if (result.version != version) {
      return Status::InvalidArgument("spool committed version " + std::to_string(result.version) +
                                     ", the workload expected " + std::to_string(version));
    }
    return Status::OK();
  }

  Status ReadAsOf(uint64_t version, const RowVisitor& visit) override {
    ReadOptions options;
    options.version = version;
    return Read(options, visit);
  }

  Status ReadLatest(const RowVisitor& visit) override { return Read(ReadOptions{}, visit); }

  Status MarkRewindPoint(const std::string& /*point_dir*/) override {
    point_ = store_->log()->Newest().version;
    return Status::OK();
  }

  Status Rewind(RewindTimes* times) override {
    Stopwatch watch;
    SPOOL_RETURN_IF_ERROR(store_->Restore(BenchTable(), point_));
    times->restore_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Close());
    times->close_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Store::Open(StoreOptions{}, dir_, &store_));
    times->open_s = watch.Seconds();
    return Status::OK();
  }

  Status Close() override {
    store_.reset();  // flushes the staged state to LMDB
    return Status::OK();
  }

 private:
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
