// Records tests: byte-exact round trip of real TopHub lines, v0.1 handling, error records,
// log loading and stores (including concurrent appends), pick-best and resumption checks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "tunekit/measure/simulated_runner.hpp"
#include "tunekit/records/record_store.hpp"

namespace tunekit {
namespace {

const std::string kData = TUNEKIT_TEST_DATA_DIR "/autotvm/";

std::vector<std::string> file_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + name + "." + std::to_string(::getpid());
}

TEST(Record, TopHubLinesRoundTripByteIdentical) {
  const auto lines = file_lines(kData + "tophub_lines.log");
  int checked = 0;
  for (const auto& line : lines) {
    auto d = decode_record_line(line);
    ASSERT_TRUE(d) << d.status().to_string();
    if (d->first != LineKind::kRecord) continue;
    EXPECT_EQ(encode_record(d->second), line);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(Record, DecodedFields) {
  const auto lines = file_lines(kData + "tophub_lines.log");
  auto d = decode_record_line(lines[2]);
  ASSERT_TRUE(d);
  const Record& r = d->second;
  EXPECT_EQ(r.target, "cuda -model=titanx");
  EXPECT_EQ(r.task_name, "conv2d_nchw.cuda");
  EXPECT_EQ(r.config_index(), 8797896u);
  EXPECT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r.mean_cost_s(), 5.69732536806342e-05);
  EXPECT_EQ(r.error_no, MeasureErrorNo::kNoError);
  EXPECT_EQ(r.tvm_version, "0.7.dev0");
  EXPECT_EQ(r.entity().size(), 8u);
}

TEST(Record, SkipsCommentsBlanksAndLegacyRows) {
  auto records = load_records(kData + "tophub_lines.log");
  ASSERT_TRUE(records) << records.status().to_string();
  EXPECT_EQ(records->size(), 2u);
  auto legacy = decode_record_line(file_lines(kData + "tophub_lines.log").back());
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->first, LineKind::kLegacy);
  EXPECT_EQ(decode_record_line("   ")->first, LineKind::kSkipped);
  EXPECT_EQ(decode_record_line("# comment")->first, LineKind::kSkipped);
}

TEST(Record, ErrorRecordsNeverCarryACost) {
  auto d = decode_record_line(file_lines(kData + "tophub_lines.log")[2]);
  Record r = d->second;
  r.error_no = MeasureErrorNo::kRuntimeDevice;
  r.costs_s.clear();
  const std::string line = encode_record(r);
  EXPECT_NE(line.find("\"result\": [[1000000000.0], 4, "), std::string::npos) << line;
  auto back = decode_record_line(line);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->second.ok());
  EXPECT_TRUE(back->second.costs_s.empty());
  EXPECT_TRUE(std::isinf(back->second.mean_cost_s()));
  // A failed record with a tiny placeholder is still never the best.
  std::vector<Record> both{r, d->second};
  auto best = best_records(both);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_TRUE(best[0].ok());
}

TEST(Record, MalformedLinesNameFileAndLine) {
  const std::string path = temp_path("bad.log");
  {
    std::ofstream out(path);
    out << file_lines(kData + "tophub_lines.log")[2] << "\n{not json\n"
        << R"({"input": ["llvm", "t", []], "config": {"entity": []}, "result": [[1.0], 0]})" << "\n";
  }
  auto lenient = load_records(path);
  ASSERT_TRUE(lenient);
  EXPECT_EQ(lenient->size(), 1u);
  LoadOptions strict;
  strict.strict = true;
  auto s = load_records(path, strict);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.status().code(), StatusCode::kParseError);
  EXPECT_NE(s.status().message().find(path + ":2:"), std::string::npos) << s.status().message();
  EXPECT_FALSE(load_records("/nonexistent/x.log"));
  std::remove(path.c_str());
}

TEST(Target, KeysAndModel) {
  auto t = parse_target("cuda -model=titanx");
  EXPECT_EQ(t.kind, "cuda");
  EXPECT_EQ(t.model, "titanx");
  EXPECT_EQ(t.keys, (std::vector<std::string>{"cuda", "gpu"}));
  EXPECT_EQ(parse_target("llvm -mcpu=skylake-avx512").keys, std::vector<std::string>{"cpu"});
  EXPECT_EQ(parse_target("llvm -mcpu=skylake-avx512").model, "unknown");
  EXPECT_EQ(parse_target("llvm -device=arm_cpu").keys, (std::vector<std::string>{"arm_cpu", "cpu"}));
  EXPECT_EQ(parse_target("opencl -device=mali").keys, (std::vector<std::string>{"mali", "opencl", "gpu"}));
  EXPECT_EQ(parse_target("c -keys=cpu -model=esp32").model, "esp32");
  EXPECT_EQ(parse_target("c -keys=cpu -model=esp32").keys, std::vector<std::string>{"cpu"});
}

TEST(Store, AppendLoadAndConcurrentWriters) {
  const std::string path = temp_path("store.log");
  std::remove(path.c_str());
  auto base = decode_record_line(file_lines(kData + "tophub_lines.log")[3])->second;
  JsonLinesStore store(path);
  constexpr int kThreads = 4, kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      JsonLinesStore mine(path);
      for (int i = 0; i < kEach; ++i) {
        Record r = base;
        r.timestamp_s = t * 1000 + i;
        ASSERT_TRUE(mine.append(r));
      }
    });
  }
  for (auto& th : threads) th.join();
  auto all = store.load();
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), static_cast<std::size_t>(kThreads * kEach));
  // A torn last line (a writer that died mid-line) does not swallow the next record.
  { std::ofstream(path, std::ios::app) << "{\"input\": [\"llvm\""; }
  ASSERT_TRUE(store.append(base));
  auto after = store.load();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->size(), static_cast<std::size_t>(kThreads * kEach + 1));
  std::remove(path.c_str());
}

TEST(Store, PickBestAndWriteRecords) {
  auto lines = file_lines(kData + "tophub_lines.log");
  Record a = decode_record_line(lines[2])->second;
  Record slower = a;
  slower.costs_s = {1e-3};
  slower.config["index"] = 1;
  Record other = decode_record_line(lines[3])->second;
  std::vector<Record> all{slower, a, other, a};
  auto best = pick_best(all);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0].config_index(), 8797896u);
  EXPECT_EQ(best[1].task_name, "conv2d_NCHWc.x86");
  const std::string path = temp_path("best.log");
  ASSERT_TRUE(write_records(path, best));
  auto back = load_records(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->size(), 2u);
  EXPECT_EQ(top_k(all, a.workload_key(), 5).size(), 3u);
  std::remove(path.c_str());
}

TEST(Resume, RecordsFromAnotherSpaceAreRefused) {
  ConfigSpace space;
  ASSERT_TRUE(space.define_range("x", 0, 4));
  Record r;
  r.space_hash = space.hash();
  std::vector<Record> mine{r};
  EXPECT_TRUE(check_resumable(mine, space, "log.jsonl"));
  r.space_hash = "0123456789abcdef";
  std::vector<Record> theirs{r, r};
  Status st = check_resumable(theirs, space, "log.jsonl");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("log.jsonl: 2 record(s)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(space.hash()), std::string::npos);
  Record upstream;  // no hash: matched by entity instead
  std::vector<Record> old{upstream};
  EXPECT_TRUE(check_resumable(old, space, "log.jsonl"));
}

TEST(Resume, TuneLogAndResumeWithoutRemeasuring) {
  auto data = ReplayData::load(kData + "convolution_subset.json.gz");
  ASSERT_TRUE(data) << data.status().to_string();
  auto shared = std::make_shared<const ReplayData>(std::move(*data));
  auto task = std::make_shared<Task>();
  task->name = "convolution_kernel";
  task->args = nlohmann::json::array({4096, 4096});
  task->target = "cuda -model=a100";
  task->space = shared->space();
  const std::string path = temp_path("tune.log");
  std::remove(path.c_str());
  TuneOptions opt;
  opt.n_trial = 30;
  opt.measure.runner = std::make_shared<SimulatedRunner>(shared);
  opt.callbacks.push_back(log_to_file(path));
  {
    Tuner tuner(task, make_strategy("random").value(), 3);
    tuner.tune(opt);
  }
  auto records = load_records(path);
  ASSERT_TRUE(records);
  ASSERT_EQ(records->size(), 30u);
  EXPECT_EQ((*records)[0].space_hash, shared->space()->hash());
  ASSERT_TRUE(check_resumable(*records, *shared->space(), path));
  auto trials = records_to_trials(*records, task);
  ASSERT_EQ(trials.size(), 30u);
  auto runner = std::make_shared<SimulatedRunner>(shared);
  Tuner resumed(task, make_strategy("random").value(), 3);
  auto loaded = resume_from_log(resumed, path);
  ASSERT_TRUE(loaded) << loaded.status().to_string();
  EXPECT_EQ(*loaded, 30u);
  TuneOptions more;
  more.n_trial = 10;
  more.measure.runner = runner;
  resumed.tune(more);
  EXPECT_EQ(resumed.trials().size(), 40u);
  EXPECT_EQ(runner->evaluations(), 10u);  // the 30 logged configurations were not measured again

  // The same log cannot resume a tuner over another definition of the space.
  auto other_space = std::make_shared<ConfigSpace>(*shared->space());
  ASSERT_TRUE(other_space->add_restriction("block_size_x >= 32"));
  auto other_task = std::make_shared<Task>(*task);
  other_task->space = other_space;
  Tuner refused(other_task, make_strategy("random").value(), 3);
  auto r = resume_from_log(refused, path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("another definition of the config space"), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tunekit
