// Records tests: byte-exact round trip of real TopHub lines, v0.1 handling, error records,
// malformed lines, log loading and stores (concurrent appends and locked rewrites), pick-best
// within one space definition and resumption checks.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
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
        << R"({"input": ["llvm", "t", []], "config": {"entity": []}, "result": [[1.0], 0]})"
        << "\n";
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

/// The second TopHub line (cuda) with `from` replaced by `to` (which must occur once).
std::string tophub_with(const std::string& from, const std::string& to) {
  std::string line = file_lines(kData + "tophub_lines.log")[2];
  const auto at = line.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(line.find(from, at + 1), std::string::npos) << from;
  return line.replace(at, from.size(), to);
}

std::string parse_error_of(const std::string& line) {
  auto d = decode_record_line(line);
  if (d) return "";
  EXPECT_EQ(d.status().code(), StatusCode::kParseError);
  return d.status().message().empty() ? "?" : d.status().message();
}

TEST(Record, OutOfRangeNumbersAndWrongTypesAreParseErrorsNotExceptions) {
  const std::string cost = "[5.69732536806342e-05]";
  EXPECT_NE(parse_error_of(tophub_with(cost, "[1e400]")).find("out of range"), std::string::npos);
  EXPECT_NE(parse_error_of(tophub_with("[1, 1], [0, 0, 0, 0]", "[1e400, 1], [0, 0, 0, 0]")), "");
  EXPECT_NE(parse_error_of(tophub_with("\"0.7.dev0\"", "7")), "");
  EXPECT_NE(parse_error_of(tophub_with("[\"tile_f\", \"sp\"", "[7, \"sp\"")), "");
  EXPECT_NE(
      parse_error_of(tophub_with("[\"tile_f\", \"sp\", [6, 1, 32, 1]]", "[\"tile_f\", \"sp\"]")),
      "");
  EXPECT_NE(parse_error_of(tophub_with("\"version\": 0.2", "\"version\": 0.2, \"space_hash\": 3")),
            "");
  EXPECT_NE(parse_error_of("{\"input\": 1e999}"), "");
  EXPECT_NE(parse_error_of("[1, 2]"), "");
}

TEST(Record, DeepNestingNulBytesAndSyntaxErrorsAreCleanParseErrors) {
  // Args or an entity payload nested past kMaxJsonDepth are refused before parsing: 50,000
  // levels parse, but copying and dumping the record recursed once per level.
  const std::string deep = std::string(50'000, '[') + std::string(50'000, ']');
  const std::string good = file_lines(kData + "tophub_lines.log")[2];
  EXPECT_EQ(parse_error_of(tophub_with("[6, 1, 32, 1]", deep)), "nested deeper than 256 levels");
  const auto args_at =
      good.find("\"conv2d_nchw.cuda\", ") + std::string("\"conv2d_nchw.cuda\", ").size();
  ASSERT_NE(args_at, std::string::npos);
  std::string deep_args = good;
  deep_args.insert(args_at, ", ").insert(args_at, deep);
  EXPECT_EQ(parse_error_of(deep_args), "nested deeper than 256 levels");
  std::string nul = good;
  nul[4] = '\0';
  EXPECT_EQ(parse_error_of(nul), "not JSON (contains a NUL byte at column 5)");
  const std::string syntax = parse_error_of("{\"input\": x}");
  EXPECT_EQ(syntax.rfind("not JSON (syntax error at column 11: ", 0), 0u) << syntax;
  EXPECT_EQ(parse_error_of(tophub_with("[5.69732536806342e-05]", "[1e400]")),
            "a number is out of range (1e400)");
  for (const std::string& m : {syntax, parse_error_of(tophub_with("\"0.7.dev0\"", "7"))}) {
    EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
  }
}

TEST(Record, LoadingSkipsOutOfRangeLinesWithFileAndLine) {
  const std::string path = temp_path("range.log");
  {
    std::ofstream out(path);
    out << file_lines(kData + "tophub_lines.log")[2] << "\n"
        << tophub_with("[5.69732536806342e-05]", "[1e400]") << "\n"
        << file_lines(kData + "tophub_lines.log")[3] << "\n";
  }
  auto lenient = load_records(path);
  ASSERT_TRUE(lenient) << lenient.status().to_string();
  EXPECT_EQ(lenient->size(), 2u);
  LoadOptions strict;
  strict.strict = true;
  auto s = load_records(path, strict);
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find(path + ":2: a number is out of range"), std::string::npos)
      << s.status().message();
  JsonLinesStore store(path);
  auto via_store = store.load();
  ASSERT_TRUE(via_store);
  EXPECT_EQ(via_store->size(), 2u);
  std::remove(path.c_str());
}

TEST(Record, SuccessfulCostsMustBeFiniteAndPositive) {
  const std::string cost = "[5.69732536806342e-05]";
  for (const char* bad : {"[-1.0]", "[0]", "[0.0]", "[1e-05, -2e-05]", "[]", "[\"fast\"]"}) {
    EXPECT_NE(parse_error_of(tophub_with(cost, bad)), "") << bad;
  }
  EXPECT_NE(parse_error_of(tophub_with(cost, "[-1.0]")).find("not a finite number > 0"),
            std::string::npos);
  auto two = decode_record_line(tophub_with(cost, "[1e-05, 3e-05]"));
  ASSERT_TRUE(two);
  EXPECT_DOUBLE_EQ(two->second.mean_cost_s(), 2e-05);
  // A failed record's costs are upstream's placeholder (or anything else): not read.
  for (const char* placeholder : {"[1000000000.0]", "[-1.0]", "[\"InstantiationError\"]", "[]"}) {
    auto failed = decode_record_line(tophub_with(cost + ", 0,", std::string(placeholder) + ", 1,"));
    ASSERT_TRUE(failed) << placeholder << ": " << failed.status().to_string();
    EXPECT_FALSE(failed->second.ok());
    EXPECT_EQ(failed->second.error_no, MeasureErrorNo::kInstantiationError);
  }
  // An error code that does not fit an int is a failure, never wrapped around to NO_ERROR.
  auto huge = decode_record_line(tophub_with(cost + ", 0,", "[1000000000.0], 4294967296,"));
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->second.error_no, MeasureErrorNo::kUnknownError);
  EXPECT_NE(parse_error_of(tophub_with(cost + ", 0,", "[1000000000.0], -1,")), "");
}

TEST(Record, ConfigIndexMustBeANonNegativeInteger) {
  const std::string index = "\"index\": 8797896";
  for (const char* bad : {"\"index\": -7", "\"index\": 1e30", "\"index\": 18446744073709551621",
                          "\"index\": 1.5", "\"index\": \"3\"", "\"index\": null"}) {
    EXPECT_NE(parse_error_of(tophub_with(index, bad)), "") << bad;
  }
  EXPECT_NE(parse_error_of(tophub_with(index + ", ", "")), "");  // no index at all
  auto zero = decode_record_line(tophub_with(index, "\"index\": 0"));
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->second.config_index(), 0u);
  auto max = decode_record_line(tophub_with(index, "\"index\": 18446744073709551615"));
  ASSERT_TRUE(max);
  EXPECT_EQ(max->second.config_index(), 18446744073709551615u);
}

TEST(Record, VersionIsOptionalButMustBeV02) {
  // Upstream's reader ignores the field, so a row without it is a v0.2 row.
  EXPECT_EQ(parse_error_of(tophub_with(", \"version\": 0.2", "")), "");
  EXPECT_NE(parse_error_of(tophub_with("\"version\": 0.2", "\"version\": 0.3")), "");
  EXPECT_NE(parse_error_of(tophub_with("\"version\": 0.2", "\"version\": \"0.2\"")), "");
}

TEST(Record, UnreadableInputsAreOneClearError) {
  const std::string dir = temp_path("logdir");
  std::filesystem::create_directories(dir);
  auto d = load_records(dir);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.status().code(), StatusCode::kIoError);
  EXPECT_NE(d.status().message().find("'" + dir + "': Is a directory"), std::string::npos)
      << d.status().message();
  std::filesystem::remove(dir);

  auto missing = load_records("/nonexistent/x.log");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("No such file or directory"), std::string::npos);

  const std::string gz = temp_path("log.gz");
  {
    std::ofstream(gz, std::ios::binary)
        << std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe\n\x01\n", 15);
  }
  for (bool strict : {false, true}) {
    LoadOptions o;
    o.strict = strict;
    auto g = load_records(gz, o);
    ASSERT_FALSE(g);
    EXPECT_NE(g.status().message().find("gzip-compressed"), std::string::npos)
        << g.status().message();
  }
  if (::geteuid() != 0) {  // root reads anything
    ::chmod(gz.c_str(), 0);
    auto denied = load_records(gz);
    ASSERT_FALSE(denied);
    EXPECT_NE(denied.status().message().find("Permission denied"), std::string::npos)
        << denied.status().message();
  }
  std::remove(gz.c_str());
}

TEST(Target, KeysAndModel) {
  auto t = parse_target("cuda -model=titanx");
  EXPECT_EQ(t.kind, "cuda");
  EXPECT_EQ(t.model, "titanx");
  EXPECT_EQ(t.keys, (std::vector<std::string>{"cuda", "gpu"}));
  EXPECT_EQ(parse_target("llvm -mcpu=skylake-avx512").keys, std::vector<std::string>{"cpu"});
  EXPECT_EQ(parse_target("llvm -mcpu=skylake-avx512").model, "unknown");
  EXPECT_EQ(parse_target("llvm -device=arm_cpu").keys,
            (std::vector<std::string>{"arm_cpu", "cpu"}));
  EXPECT_EQ(parse_target("opencl -device=mali").keys,
            (std::vector<std::string>{"mali", "opencl", "gpu"}));
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

Record timed(const Record& base, double timestamp) {
  Record r = base;
  r.timestamp_s = timestamp;
  return r;
}

TEST(Store, LockedRewriteLosesNoConcurrentAppend) {
  const std::string path = temp_path("live.log");
  std::remove(path.c_str());
  const Record base = decode_record_line(file_lines(kData + "tophub_lines.log")[3])->second;
#if defined(__SANITIZE_ADDRESS__)
  // Every rewrite parses the whole log, so the cost grows with the square of the appends: 2000
  // took over 10 min under AddressSanitizer on 2 busy cores (9 s without).
  constexpr int kAppends = 300;
#else
  constexpr int kAppends = 2000;
#endif
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    JsonLinesStore store(path);
    for (int i = 0; i < kAppends; ++i) {
      if (!store.append(timed(base, i))) ::_exit(1);
    }
    ::_exit(0);
  }
  // Rewrite the log in place (the same content) while the child appends, pausing between
  // rewrites so the appender is not starved of the lock (flock is not fair), at most kRewrites
  // times so the test's time stays bounded on a loaded machine.
  constexpr int kRewrites = 300;
  int rewrites = 0, status = 0;
  pid_t done = 0;
  while (rewrites < kRewrites && (done = ::waitpid(child, &status, WNOHANG)) == 0) {
    {
      auto lock = LockedLog::acquire(path);
      ASSERT_TRUE(lock) << lock.status().to_string();
      auto current = lock->load();
      ASSERT_TRUE(current) << current.status().to_string();
      ASSERT_TRUE(lock->replace(*current));
    }
    ++rewrites;
    ::usleep(300);
  }
  if (done == 0) {
    ASSERT_EQ(::waitpid(child, &status, 0), child);
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_GT(rewrites, 0);
  auto all = load_records(path);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), static_cast<std::size_t>(kAppends)) << rewrites << " rewrites";
  std::remove(path.c_str());
}

TEST(Store, LockedReadModifyReplaceSerializes) {
  const std::string path = temp_path("union.log");
  std::remove(path.c_str());
  const Record base = decode_record_line(file_lines(kData + "tophub_lines.log")[3])->second;
  constexpr int kThreads = 8, kEach = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto lock = LockedLog::acquire(path);
        ASSERT_TRUE(lock) << lock.status().to_string();
        auto current = lock->load();
        ASSERT_TRUE(current);
        current->push_back(timed(base, t * 1000 + i));
        ASSERT_TRUE(lock->replace(*current));
      }
    });
  }
  for (auto& th : threads) th.join();
  auto all = load_records(path);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), static_cast<std::size_t>(kThreads * kEach));
  std::remove(path.c_str());
}

TEST(Store, LockedLogKeepsModeAndRemovesAFileItOnlyCreated) {
  const std::string path = temp_path("mode.log");
  std::remove(path.c_str());
  {
    auto lock = LockedLog::acquire(path);
    ASSERT_TRUE(lock);
    EXPECT_TRUE(lock->created());
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // nothing was written: no empty file left
  const Record base = decode_record_line(file_lines(kData + "tophub_lines.log")[3])->second;
  ASSERT_TRUE(write_records(path, std::vector<Record>{base}));
  ::chmod(path.c_str(), 0640);
  ASSERT_TRUE(write_records(path, std::vector<Record>{base, base}));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(load_records(path)->size(), 2u);
  const std::string dir = temp_path("outdir");
  std::filesystem::create_directories(dir);
  auto d = LockedLog::acquire(dir);
  ASSERT_FALSE(d);
  EXPECT_NE(d.status().message().find(dir), std::string::npos);
  std::filesystem::remove(dir);
  std::remove(path.c_str());
}

TEST(Store, OnlyTheLastRecordsSpaceDefinitionCompetes) {
  auto lines = file_lines(kData + "tophub_lines.log");
  Record old_fast = decode_record_line(lines[2])->second;
  old_fast.space_hash = "aaaa";
  old_fast.costs_s = {1e-6};
  Record current = old_fast;
  current.space_hash = "bbbb";
  current.costs_s = {1e-3};
  current.config["index"] = 5;
  Record current_slow = current;
  current_slow.costs_s = {2e-3};
  current_slow.config["index"] = 6;
  Record other = decode_record_line(lines[3])->second;  // another workload, no hash
  std::vector<Record> all{old_fast, current_slow, other, current, old_fast, current_slow};
  auto kept = current_definition_records(all);
  ASSERT_EQ(kept.size(), 4u);
  for (const auto& r : kept) EXPECT_NE(r.space_hash, "aaaa");
  auto cuda = [&](const std::vector<Record>& v) {
    auto it = std::find_if(v.begin(), v.end(),
                           [&](const Record& r) { return r.task_name == current.task_name; });
    return it == v.end() ? Record{} : *it;
  };
  auto best = pick_best(all);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(cuda(best).config_index(), 5u);  // not the faster record of the other definition
  EXPECT_EQ(cuda(best_records(all)).config_index(), 5u);
  EXPECT_EQ(top_k(all, current.workload_key(), 5).size(), 3u);
  // The last record decides, whatever its definition: here the old one.
  all.push_back(old_fast);
  best = pick_best(all);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(cuda(best).space_hash, "aaaa");
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
