// The part of reading a log that needs nothing shared across inputs, run ahead of the reader
// (log_reader.h) on a thread of its own: lines read and decoded (line_reader.h), repaired
// (line_repair.h), and the places where NCCL records start found. The reader then does only
// what depends on every line before it (processes, communicators, the collective stream), in
// the same order as before, so what it reads is the same whichever thread did this part.
//
// Lines travel in batches, a few batches ahead of the reader at most: memory stays bounded
// whatever the size of the input.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "evidence/input_source.h"
#include "evidence/line_reader.h"
#include "evidence/line_repair.h"

namespace denpex::evidence {

// Glued NCCL records of one line read as records; beyond this many the last takes the rest.
constexpr size_t kMaxRecordStarts = 16;

// Where " NCCL " stands in `s` at or after `from` + 1 (the offset of its space), npos if nowhere.
size_t find_nccl(std::string_view s, size_t from = 0);
// Where the NCCL records of a repaired line start ("host:pid:tid [dev] NCCL ..."), ascending,
// at most kMaxRecordStarts, into `starts`. Returns how many (0: no NCCL header in the line).
size_t nccl_record_starts(std::string_view text, size_t* starts);

// One physical line, as the reader's own line handling would have prepared it.
struct FedLine {
  long long line_no = 0;
  LineLabel label;
  std::uint32_t text_at = 0, text_size = 0;  // the repaired text, in FedBatch::chars
  std::uint32_t cut_at = 0, cut_size = 0;    // a cut line: its first 120 bytes as read, in chars
  std::uint32_t starts_at = 0;               // its record starts, in FedBatch::starts
  std::uint8_t nstarts = 0;
  bool cut = false;       // longer than kMaxLine: the rest was skipped
  bool indented = false;  // the line as read (before repair took its prefixes) began with a blank
};

struct FedBatch {
  std::string chars;
  std::vector<size_t> starts;
  std::vector<FedLine> lines;
  std::string_view text(const FedLine& l) const { return std::string_view(chars).substr(l.text_at, l.text_size); }
  std::string_view cut_text(const FedLine& l) const { return std::string_view(chars).substr(l.cut_at, l.cut_size); }
  const size_t* starts_of(const FedLine& l) const { return starts.data() + l.starts_at; }
};

class LineFeed {
 public:
  // Reads `source` (not owned; it must outlive the feed). `threaded`: on a thread of its own,
  // started here; else on the caller's, one batch each time next() asks.
  LineFeed(ByteSource* source, bool threaded);
  // Stops the thread (after the read it is in) and waits for it.
  ~LineFeed();
  LineFeed(const LineFeed&) = delete;
  LineFeed& operator=(const LineFeed&) = delete;

  // The next batch (valid until the next call), nullptr at the end of the input. Rethrows what
  // the reading thread threw (allocation failure).
  const FedBatch* next();
  // Once next() gave nullptr: the line reader's error ("" when the input ended cleanly), and the
  // host labels line repair learned from this input (line_repair.h).
  const std::string& error() const { return error_; }
  HostLabels& host_labels() { return labels_; }

 private:
  static constexpr size_t kSlots = 4;
  bool fill(FedBatch* b);
  void produce();

  LineReader lines_;
  HostLabels labels_;
  std::string raw_;
  std::string error_;
  bool threaded_;
  FedBatch own_;  // the one batch when not threaded
  FedBatch slots_[kSlots];
  std::mutex mu_;
  std::condition_variable cv_;
  size_t produced_ = 0, consumed_ = 0, released_ = 0;
  bool holding_ = false, finished_ = false, stop_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace denpex::evidence
