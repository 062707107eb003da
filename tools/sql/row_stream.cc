#include "row_stream.h"

#include <chrono>
#include <cstring>

namespace spool::sql {

Cell* RowWriter::AddRow() {
  const size_t columns = stream_->columns_;
  if (batch_.rows >= RowStream::kBatchRows || batch_.bytes.size() >= RowStream::kBatchBytes) stream_->Hand(&batch_);
  ++batch_.rows;
  batch_.cells.resize(batch_.rows * columns);
  return batch_.cells.data() + (batch_.rows - 1) * columns;
}

void RowWriter::SetDouble(Cell* cell, double value) {
  cell->type = SQLITE_FLOAT;
  std::memcpy(&cell->integer, &value, sizeof value);
}

void RowWriter::SetBytes(Cell* cell, int type, std::string_view bytes) {
  cell->type = type;
  cell->offset = static_cast<uint32_t>(batch_.bytes.size());
  cell->length = static_cast<uint32_t>(bytes.size());
  batch_.bytes.append(bytes);
}

void RowWriter::SetValue(Cell* cell, const Value& value) {
  switch (value.index()) {
    case 0:
      cell->type = SQLITE_NULL;
      break;
    case static_cast<size_t>(ColumnType::kInt64):
      SetInt(cell, std::get<int64_t>(value));
      break;
    case static_cast<size_t>(ColumnType::kDouble):
      SetDouble(cell, std::get<double>(value));
      break;
    case static_cast<size_t>(ColumnType::kString):
      SetText(cell, std::get<std::string>(value));
      break;
    case static_cast<size_t>(ColumnType::kBool):
      SetInt(cell, std::get<bool>(value) ? 1 : 0);
      break;
    case static_cast<size_t>(ColumnType::kTimestamp):
      SetText(cell, FormatTimestampMicros(std::get<Timestamp>(value).micros));
      break;
    default:
      SetBlob(cell, std::get<Bytes>(value).data);
  }
}

bool RowWriter::Wanted() const {
  if (stream_->stopping_.load(std::memory_order_relaxed)) return false;
  // The clock, every 256 rows.
  return batch_.rows % 256 != 0 || !stream_->context_->Stopped();
}

void RowStream::Hand(CellBatch* batch) {
  if (inline_) return;  // everything stays in the one batch
  auto full = std::make_unique<CellBatch>(std::move(*batch));
  *batch = CellBatch{};
  batch->cells.reserve(kBatchRows * columns_);
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return stopping_ || ready_.size() < kBatchesAhead; });
  if (stopping_) return;
  ready_.push_back(std::move(full));
  changed_.notify_all();
}

void RowStream::Start(Read read, bool inline_read) {
  writer_.stream_ = this;
  inline_ = inline_read;
  if (inline_) {
    status_ = read(&writer_);
    current_ = std::make_unique<CellBatch>(std::move(writer_.batch_));
    return;
  }
  writer_.batch_.cells.reserve(kBatchRows * columns_);
  thread_ = std::thread([this, read = std::move(read)] {
    Status s = read(&writer_);
    auto last = std::make_unique<CellBatch>(std::move(writer_.batch_));
    std::lock_guard lock(mu_);
    if (last->rows > 0 && !stopping_) ready_.push_back(std::move(last));
    read_status_ = std::move(s);
    done_ = true;
    changed_.notify_all();
  });
}

bool RowStream::Next() {
  while (status_.ok()) {
    if (current_ != nullptr && next_row_ < current_->rows) {
      row_ = next_row_++;
      return true;
    }
    current_.reset();
    if (inline_) return false;
    std::unique_lock lock(mu_);
    while (ready_.empty() && !done_) {
      // Waits in slices, so that the statement's timeout and Interrupt
      // reach a cursor whose read is slow to produce its next row.
      changed_.wait_for(lock, std::chrono::milliseconds(50));
      if (context_->Stopped()) status_ = context_->StopStatus();
      if (!status_.ok()) return false;
    }
    if (ready_.empty()) {
      status_ = read_status_;
      return false;
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    changed_.notify_all();
    next_row_ = 0;
  }
  return false;
}

void RowStream::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    ready_.clear();
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace spool::sql
