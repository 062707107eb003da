// Rows handed from a store read to a SQLite cursor. The store's reads push
// rows to a callback; a cursor pulls them one at a time. A RowStream runs
// the read on a thread of its own, which fills batches of cells (values in
// SQLite's storage classes, their bytes in the batch) and hands them over
// two at most ahead of the cursor: memory stays bounded whatever the size
// of the table, and the read and SQLite's work on the rows overlap. A read
// known to yield a row or none (a point lookup) runs inline instead.
//
// Thread-safety: one producer (the read) and one consumer (the cursor).
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "spool/storage/schema.h"
#include "spool/storage/table.h"
#include "sql_internal.h"

namespace spool::sql {

struct Cell {
  int64_t integer = 0;  // SQLITE_INTEGER; a double's bits for SQLITE_FLOAT
  uint32_t offset = 0;  // SQLITE_TEXT, SQLITE_BLOB: the bytes in the batch
  uint32_t length = 0;
  int type = SQLITE_NULL;
};

struct CellBatch {
  size_t rows = 0;
  std::vector<Cell> cells;  // rows × columns
  std::string bytes;
};

// What a read writes rows with.
class RowWriter {
 public:
  // The cells of a new row (all null), valid until the next call.
  Cell* AddRow();
  void SetInt(Cell* cell, int64_t value) {
    cell->type = SQLITE_INTEGER;
    cell->integer = value;
  }
  void SetDouble(Cell* cell, double value);
  void SetText(Cell* cell, std::string_view text) { SetBytes(cell, SQLITE_TEXT, text); }
  void SetBlob(Cell* cell, std::string_view bytes) { SetBytes(cell, SQLITE_BLOB, bytes); }
  // A store value in its SQL form: bool as 0/1, a timestamp as text.
  void SetValue(Cell* cell, const Value& value);
  // Whether the reader still wants rows; false once the cursor closed, or
  // the statement stopped.
  bool Wanted() const;

 private:
  friend class RowStream;
  void SetBytes(Cell* cell, int type, std::string_view bytes);
  class RowStream* stream_ = nullptr;
  CellBatch batch_;
};

class RowStream {
 public:
  // The read: writes rows until it ends or Wanted() turns false.
  using Read = std::function<Status(RowWriter* writer)>;

  RowStream(Context* context, size_t columns) : context_(context), columns_(columns) {}
  ~RowStream() { Stop(); }

  // Starts `read` on its own thread, or runs it now when `inline_read`.
  void Start(Read read, bool inline_read);
  // To the next row; false at the end or on an error (then status()).
  bool Next();
  const Cell& cell(size_t column) const { return current_->cells[row_ * columns_ + column]; }
  std::string_view bytes(const Cell& cell) const { return {current_->bytes.data() + cell.offset, cell.length}; }
  const Status& status() const { return status_; }
  // Stops the read and waits for its thread.
  void Stop();

 private:
  friend class RowWriter;
  static constexpr size_t kBatchRows = 1024;
  static constexpr size_t kBatchBytes = 1 << 20;
  static constexpr size_t kBatchesAhead = 2;
  // The producer hands a full batch over (waiting while two are ahead).
  void Hand(CellBatch* batch);

  Context* const context_;
  const size_t columns_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<CellBatch>> ready_;  // guarded by mu_
  bool done_ = false;                             // guarded by mu_: the read returned
  std::atomic<bool> stopping_{false};             // set under mu_: the cursor wants no more
  Status read_status_;                            // guarded by mu_
  bool inline_ = false;                           // set before the read starts
  // The consumer's: the batch it reads, its row and the next.
  std::unique_ptr<CellBatch> current_;
  size_t row_ = 0, next_row_ = 0;
  Status status_;
  RowWriter writer_;
};

}  // namespace spool::sql
