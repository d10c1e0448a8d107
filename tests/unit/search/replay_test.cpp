// Replay tests: Kernel Tuner and T4 files load to the same data, the simulated runner answers and
// charges recorded times, and the metrics (fraction of optimum, methodology) follow their
// definitions.
#include "tunekit/search/replay.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>

#include "../test_files.hpp"

namespace tunekit {
namespace {

const std::string kFixture = TUNEKIT_TEST_DATA_DIR "/autotvm/convolution_subset.json.gz";

TEST(ReplayData, KernelTunerAndT4AgreeOnTheFixture) {
  auto kt = ReplayData::load(kFixture);
  auto t4 = ReplayData::load(TUNEKIT_TEST_DATA_DIR "/autotvm/convolution_subset_T4.json.gz");
  ASSERT_TRUE(kt) << kt.status().to_string();
  ASSERT_TRUE(t4) << t4.status().to_string();
  EXPECT_EQ(kt->format(), "kernel_tuner");
  EXPECT_EQ(t4->format(), "t4");
  EXPECT_EQ(kt->entries().size(), 554u);
  EXPECT_EQ(t4->entries().size(), 554u);
  EXPECT_EQ(kt->valid_count(), 540u);
  EXPECT_EQ(t4->valid_count(), 540u);
  EXPECT_DOUBLE_EQ(kt->optimum_ms(), t4->optimum_ms());
  EXPECT_NEAR(kt->optimum_ms(), 0.5536, 1e-4);
  EXPECT_EQ(kt->parameter_names(), t4->parameter_names());
  EXPECT_EQ(kt->space()->valid_count(), 554u);
  double kt_total = 0, t4_total = 0;
  // T4 keeps no runtimes for failed entries, so compare the successful ones.
  for (const auto& e : kt->entries()) kt_total += e.ok() ? e.total_ms() : 0.0;
  for (const auto& e : t4->entries()) t4_total += e.ok() ? e.total_ms() : 0.0;
  EXPECT_NEAR(kt_total, t4_total, 1e-6 * kt_total);
}

TEST(ReplayData, BadInputsNameTheFile) {
  auto missing = ReplayData::load("/nonexistent/cache.json.gz");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  auto bad = ReplayData::from_json(
      nlohmann::ordered_json::parse(
          R"({"tune_params": {"a": [1]}, "cache": {"2": {"a": 2, "time": 1.0}}})"),
      "x.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), StatusCode::kParseError);
  EXPECT_NE(bad.status().message().find("x.json"), std::string::npos);
  EXPECT_FALSE(ReplayData::from_json(nlohmann::ordered_json::parse(R"({"foo": 1})"), "y.json"));
}

/// Writes `text` gzip-compressed to `name` in `dir`, or appends it as another gzip member.
std::string write_gzip(const testing::TempDir& dir, const std::string& name,
                       const std::string& text, bool append = false) {
  const std::string path = dir.file(name);
  gzFile f = gzopen(path.c_str(), append ? "ab" : "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return path;
}

TEST(ReplayData, FilesAndDocumentsGiveTheSameKernelTunerData) {
  // Parameter order from tune_params_keys; 16.0 is the value 16; failures as strings, and 1e20
  // as in old files; a missing compile_time counts 0.
  const std::string text = R"({"tune_params_keys": ["b", "a"],
    "tune_params": {"a": [16, 32], "b": ["x", "y"]},
    "cache": {"16,x": {"a": 16.0, "b": "x", "time": 1.5, "compile_time": 2, "times": [1.4, 1.6]},
              "32,x": {"b": "x", "a": 32, "time": "CompilationFailedConfig"},
              "16,y": {"a": 16, "b": "y", "time": 1e20},
              "32,y": {"a": 32, "b": "y", "time": 0.5}}})";
  testing::TempDir dir;
  write_gzip(dir, "two_members.json.gz", text.substr(0, 100));
  write_gzip(dir, "two_members.json.gz", text.substr(100), /*append=*/true);
  std::vector<Expected<ReplayData>> loaded;
  loaded.push_back(ReplayData::load(dir.write("cache.json", text)));
  loaded.push_back(ReplayData::load(write_gzip(dir, "cache.json.gz", text)));
  loaded.push_back(ReplayData::load(dir.file("two_members.json.gz")));
  loaded.push_back(ReplayData::from_json(nlohmann::ordered_json::parse(text), "doc"));
  for (const auto& d : loaded) {
    ASSERT_TRUE(d) << d.status().to_string();
    EXPECT_EQ(d->format(), "kernel_tuner");
    EXPECT_EQ(d->parameter_names(), (std::vector<std::string>{"b", "a"}));
    EXPECT_EQ(d->parameter_values()[1], (std::vector<nlohmann::json>{16, 32}));
    EXPECT_TRUE(d->parameter_values()[1][0].is_number_integer());
    ASSERT_EQ(d->entries().size(), 4u);
    const auto& e = d->entries();
    EXPECT_EQ(e[0].knobs, (KnobVector{0, 0}));
    EXPECT_EQ(e[0].time_ms, 1.5);
    EXPECT_EQ(e[0].compile_ms, 2.0);
    EXPECT_EQ(e[1].knobs, (KnobVector{0, 1}));
    EXPECT_EQ(e[1].error_no, MeasureErrorNo::kCompileDevice);
    EXPECT_EQ(e[1].failure, "CompilationFailedConfig");
    EXPECT_EQ(e[2].knobs, (KnobVector{1, 0}));
    EXPECT_EQ(e[2].error_no, MeasureErrorNo::kRuntimeDevice);
    EXPECT_EQ(e[2].failure, "RuntimeFailedConfig");
    EXPECT_EQ(e[3].compile_ms, 0.0);
    EXPECT_EQ(d->optimum_ms(), 0.5);
    EXPECT_EQ(d->valid_count(), 2u);
    EXPECT_EQ(d->space()->hash(), loaded[0]->space()->hash());
  }
}

TEST(ReplayData, T4ValuesAreThoseSeenNumbersAscending) {
  const std::string text = R"({"results": [
    {"configuration": {"a": 4, "s": "p"}, "times": {"compilation": 1, "runtimes": [1, 2]},
     "invalidity": "correct", "measurements": [{"name": "time", "value": 1.5}]},
    {"configuration": {"a": 1, "s": "q"}, "times": {}, "invalidity": "runtime",
     "measurements": [{"name": "time", "value": "RuntimeFailedConfig"}]},
    {"configuration": {"s": "p", "a": 2.0}, "times": {},
     "measurements": [{"name": "time", "value": 0.5}]}]})";
  testing::TempDir dir;
  for (const auto& d : {ReplayData::load(dir.write("t4.json", text)),
                        ReplayData::from_json(nlohmann::ordered_json::parse(text), "doc")}) {
    ASSERT_TRUE(d) << d.status().to_string();
    EXPECT_EQ(d->format(), "t4");
    EXPECT_EQ(d->parameter_names(), (std::vector<std::string>{"a", "s"}));
    EXPECT_EQ(d->parameter_values()[0], (std::vector<nlohmann::json>{1, 2.0, 4}));
    EXPECT_EQ(d->parameter_values()[1], (std::vector<nlohmann::json>{"p", "q"}));
    const auto& e = d->entries();
    ASSERT_EQ(e.size(), 3u);
    EXPECT_EQ(e[0].knobs, (KnobVector{2, 0}));
    EXPECT_EQ(e[0].benchmark_ms, 3.0);
    EXPECT_EQ(e[0].compile_ms, 1.0);
    EXPECT_EQ(e[1].knobs, (KnobVector{0, 1}));
    EXPECT_EQ(e[1].error_no, MeasureErrorNo::kRuntimeDevice);
    EXPECT_EQ(e[1].failure, "RuntimeFailedConfig");
    EXPECT_EQ(e[2].knobs, (KnobVector{1, 0}));
    EXPECT_EQ(e[2].time_ms, 0.5);
  }
}

TEST(ReplayData, DamagedFilesGiveOneErrorNamingTheFile) {
  const std::string text = R"({"tune_params": {"a": [1, 2]},
    "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": 2.0}}})";
  testing::TempDir dir;
  const std::string gz = testing::slurp(write_gzip(dir, "ok.json.gz", text));
  std::string corrupt = gz;
  corrupt[gz.size() / 2] = static_cast<char>(corrupt[gz.size() / 2] ^ 0x5a);
  struct Case {
    std::string name, bytes;
    StatusCode code;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"truncated.json.gz", gz.substr(0, gz.size() - 12), StatusCode::kIoError,
       "cannot decompress: unexpected end of file"},
      {"corrupt.json.gz", corrupt, StatusCode::kIoError, "cannot decompress: "},
      {"truncated.json", text.substr(0, text.size() - 5), StatusCode::kParseError,
       "not valid JSON: "},
      {"empty.json", "", StatusCode::kParseError, "not valid JSON: "},
      {"entry.json", R"({"tune_params": {"a": [1]}, "cache": {"1": [1]}})", StatusCode::kParseError,
       "cache entry '1' is not an object"},
      {"runtimes.json",
       R"({"results": [{"configuration": {"a": 1}, "times": {"runtimes": ["x"]}}]})",
       StatusCode::kParseError, "T4 result 0: a runtime is a string, not a number"},
      // Nesting past kMaxJsonDepth, even in a field replay ignores, is refused before parsing.
      {"deep.json",
       std::string(R"({"tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1.0, "x": )")
           .append(50'000, '[')
           .append(50'000, ']')
           .append("}}}"),
       StatusCode::kParseError, "nested deeper than 256 levels"},
      {"nul.json", std::string("{\"tune_params\": {\"a\": [1]}\0}", 28), StatusCode::kParseError,
       "contains a NUL byte"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.write(c.name, c.bytes);
    auto d = ReplayData::load(path);
    ASSERT_FALSE(d) << c.name;
    EXPECT_EQ(d.status().code(), c.code) << d.status().to_string();
    EXPECT_EQ(d.status().message().rfind(path + ": ", 0), 0u) << d.status().to_string();
    EXPECT_NE(d.status().message().find(c.what), std::string::npos) << d.status().to_string();
  }
  auto directory = ReplayData::load(dir.file(""));
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.status().code(), StatusCode::kIoError);
}

TEST(ReplayData, BadRecordsGiveOneErrorNamingTheFileAndTheRecord) {
  // Each document differs from a good one in one place; the message names the file and the
  // cache key or T4 result index, and says what is wrong.
  struct Case {
    const char* json;
    std::string what;
  };
  const std::vector<Case> cases = {
      // Kernel Tuner cache: the objective is a finite time > 0.
      {R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": -5.0}}})",
       "cache entry '2': 'time' is -5.0; a recorded time is a normal finite number of "
       "milliseconds > 0"},
      // A subnormal time would make the fraction of optimum infinite.
      {R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": 1e-320}}})",
       "cache entry '2': 'time' is 1e-320; a recorded time is a normal finite number"},
      // Replay minimises 'time': a cache tuned for another objective is refused.
      {R"({"tune_params": {"a": [1]}, "objective": "GFLOP/s", "cache": {"1": {"a": 1, "time": 1.0}}})",
       "'objective' is \"GFLOP/s\"; replay supports caches tuned for \"time\" only"},
      {R"({"tune_params": {"a": [1]}, "objective": 3, "cache": {"1": {"a": 1, "time": 1.0}}})",
       "'objective' is a number, not a string"},
      {R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": 0}}})",
       "cache entry '2': 'time' is 0; a recorded time"},
      // Times charged to the simulated clock are finite and >= 0.
      {R"({"tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1.0, "compile_time": -1.5}}})",
       "cache entry '1': 'compile_time' is -1.5; a recorded time is a finite number of "
       "milliseconds >= 0"},
      {R"({"tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1.0, "compile_time": "n/a"}}})",
       "cache entry '1': 'compile_time' is \"n/a\""},
      {R"({"tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1.0, "framework_time": -2}}})",
       "cache entry '1': 'framework_time' is -2"},
      {R"({"tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1.0, "verification_time": null}}})",
       "cache entry '1': 'verification_time' is null"},
      // Only the failures Kernel Tuner writes.
      {R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": "fast"}}})",
       "cache entry '2': 'time' is \"fast\", neither a number nor a failure Kernel Tuner writes "
       "(InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig)"},
      // tune_params: each value once, at least one parameter.
      {R"({"tune_params": {"a": [1, 1, 2, 3]}, "cache": {"1": {"a": 1, "time": 1.0}}})",
       "tune_params 'a' lists the value 1 twice"},
      {R"({"tune_params": {"a": [1, 2.0, 2]}, "cache": {"1": {"a": 1, "time": 1.0}}})",
       "tune_params 'a' lists the value 2 twice"},
      {R"({"tune_params": {}, "cache": {"": {"time": 1.0}, "x": {"time": 2.0}}})",
       "'tune_params' has no parameter"},
      {R"({"tune_params_keys": [], "tune_params": {"a": [1]}, "cache": {"1": {"a": 1, "time": 1.0}}})",
       "'tune_params_keys' names no parameter"},
      {R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "1.0": {"a": 1.0, "time": 2.0}}})",
       "configuration a=1 is recorded twice (cache entries 0 and 1)"},
      // T4: the same rules, naming the result index.
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "invalidity": "correct",
                        "measurements": [{"name": "time", "value": -3.0}]}]})",
       "T4 result 0: the time measurement is -3.0; a recorded time is a normal finite number of "
       "milliseconds > 0"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "invalidity": "correct",
                        "measurements": [{"name": "time", "value": 4e-310}]}]})",
       "T4 result 0: the time measurement is 4e-310"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {"runtimes": "x"},
                        "measurements": [{"name": "time", "value": 3.0}]}]})",
       "T4 result 0: times.runtimes is a string, not a list"},
      {R"({"results": [{"configuration": {"a": 1}, "times": 7,
                        "measurements": [{"name": "time", "value": 3.0}]}]})",
       "T4 result 0: 'times' is a number, not an object"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {"compilation": -1}, "invalidity": "correct",
                        "measurements": [{"name": "time", "value": 3.0}]}]})",
       "T4 result 0: times.compilation is -1; a recorded time is a finite number of milliseconds "
       ">= 0"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {"framework": "x"},
                        "measurements": [{"name": "time", "value": 3.0}]}]})",
       "T4 result 0: times.framework is \"x\""},
      {R"({"results": [{"configuration": {"a": 1}, "times": {"runtimes": [1.0, -1.0]},
                        "measurements": [{"name": "time", "value": 3.0}]}]})",
       "T4 result 0: a runtime is -1.0"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "invalidity": "correct",
                        "measurements": [{"name": "time", "value": "fast"}]}]})",
       "T4 result 0 is \"correct\" but its time measurement is \"fast\""},
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "invalidity": "correct"}]})",
       "T4 result 0 is \"correct\" but its time measurement is missing"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "invalidity": "slow",
                        "measurements": [{"name": "time", "value": "RuntimeFailedConfig"}]}]})",
       "T4 result 0: 'invalidity' is \"slow\", not one of correct, compile, runtime"},
      // Every result names every parameter (names come from all results, not the first).
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]},
                       {"configuration": {"a": 2, "b": 1}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]}]})",
       "T4 result 0 has no parameter 'b'"},
      {R"({"results": [{"configuration": {"a": 1, "extra": 1}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]},
                       {"configuration": {"a": 1, "extra": 2}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]},
                       {"configuration": {"a": 2}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]}]})",
       "T4 result 2 has no parameter 'extra'"},
      {R"({"results": [{"configuration": {}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]}]})",
       "T4 results name no parameter"},
      {R"({"results": [{"configuration": {"a": 1}, "times": {}, "measurements": [{"name": "time", "value": 1.0}]},
                       {"configuration": {"a": 1}, "times": {}, "measurements": [{"name": "time", "value": 2.0}]}]})",
       "configuration a=1 is recorded twice (T4 results 0 and 1)"},
  };
  testing::TempDir dir;
  for (const Case& c : cases) {
    const std::string path = dir.write("bad.json", c.json);
    for (const auto& d : {ReplayData::load(path),
                          ReplayData::from_json(nlohmann::ordered_json::parse(c.json), path)}) {
      ASSERT_FALSE(d) << c.json;
      EXPECT_EQ(d.status().code(), StatusCode::kParseError) << d.status().to_string();
      EXPECT_EQ(d.status().message().rfind(path + ": ", 0), 0u) << d.status().to_string();
      EXPECT_NE(d.status().message().find(c.what), std::string::npos)
          << d.status().to_string() << "\nwanted: " << c.what;
    }
  }
}

TEST(ReplayData, FailuresMapToTheirCodes) {
  // Kernel Tuner's three failure strings; the T4 schema's invalidity values.
  auto kt =
      ReplayData::from_json(nlohmann::ordered_json::parse(R"({"tune_params": {"a": [1, 2, 3, 4]},
    "cache": {"1": {"a": 1, "time": 2.5, "compile_time": 0, "benchmark_time": 1e3},
              "2": {"a": 2, "time": "InvalidConfig"}, "3": {"a": 3, "time": "CompilationFailedConfig"},
              "4": {"a": 4, "time": "RuntimeFailedConfig"}}})"),
                            "kt");
  ASSERT_TRUE(kt) << kt.status().to_string();
  EXPECT_EQ(kt->entries()[0].total_ms(), 1e3);
  EXPECT_EQ(kt->entries()[1].error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_EQ(kt->entries()[2].error_no, MeasureErrorNo::kCompileDevice);
  EXPECT_EQ(kt->entries()[3].error_no, MeasureErrorNo::kRuntimeDevice);
  auto t4 = ReplayData::from_json(nlohmann::ordered_json::parse(R"({"results": [
    {"configuration": {"a": 1}, "times": {}, "invalidity": "correct", "measurements": [{"name": "time", "value": 2.5}]},
    {"configuration": {"a": 2}, "times": {}, "invalidity": "compile", "measurements": [{"name": "time", "value": "CompilationFailedConfig"}]},
    {"configuration": {"a": 3}, "times": {}, "invalidity": "runtime"},
    {"configuration": {"a": 4}, "times": {}, "invalidity": "constraints"},
    {"configuration": {"a": 5}, "times": {}, "invalidity": "timeout"},
    {"configuration": {"a": 6}, "times": {}, "invalidity": "correctness"},
    {"configuration": {"a": 7}, "times": {}, "invalidity": "correct", "measurements": [{"name": "time", "value": "RuntimeFailedConfig"}]}]})"),
                                  "t4");
  ASSERT_TRUE(t4) << t4.status().to_string();
  const auto& e = t4->entries();
  EXPECT_EQ(e[0].time_ms, 2.5);
  EXPECT_EQ(e[1].error_no, MeasureErrorNo::kCompileDevice);
  EXPECT_EQ(e[1].failure, "CompilationFailedConfig");
  EXPECT_EQ(e[2].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(e[2].failure, "runtime");
  EXPECT_EQ(e[3].error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_EQ(e[4].error_no, MeasureErrorNo::kRunTimeout);
  EXPECT_EQ(e[5].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(e[6].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(t4->valid_count(), 1u);
}

TEST(SimulatedRunner, AnswersFromTheDataAndChargesRecordedTimes) {
  auto data = std::make_shared<const ReplayData>(ReplayData::load(kFixture).value());
  SimulatedRunner runner(data);
  auto task = std::make_shared<Task>();
  task->space = data->space();
  std::vector<MeasureInput> inputs;
  const ReplayEntry* ok = nullptr;
  const ReplayEntry* failed = nullptr;
  for (const auto& e : data->entries()) {
    if (!ok && e.ok()) ok = &e;
    if (!failed && !e.ok()) failed = &e;
  }
  ASSERT_TRUE(ok && failed);
  inputs.push_back({task, data->space()->config_of(ok->knobs)});
  inputs.push_back({task, data->space()->config_of(failed->knobs)});
  auto results = runner.run(inputs, {});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_DOUBLE_EQ(results[0].costs_s[0], ok->time_ms * 1e-3);
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_TRUE(results[1].costs_s.empty());
  EXPECT_NEAR(runner.clock_s(), (ok->total_ms() + failed->total_ms()) * 1e-3, 1e-9);
  EXPECT_DOUBLE_EQ(results[1].timestamp_s, runner.clock_s());
  // A configuration outside the data: an instantiation error that costs nothing.
  KnobVector outside(data->parameter_names().size(), 0);
  outside[4] = 0;  // read_only = 0 is not in the fixture
  const double before = runner.clock_s();
  auto r = runner.run(std::vector<MeasureInput>{{task, data->space()->config_of(outside)}}, {});
  EXPECT_EQ(r[0].error_no, MeasureErrorNo::kInstantiationError);
  EXPECT_EQ(runner.clock_s(), before);
  EXPECT_EQ(runner.evaluations(), 2u);
}

ReplayData synthetic(std::vector<double> times_ms, double total_ms = 1000.0) {
  nlohmann::ordered_json doc;
  doc["tune_params_keys"] = {"x"};
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < times_ms.size(); ++i) values.push_back(i);
  doc["tune_params"]["x"] = values;
  for (std::size_t i = 0; i < times_ms.size(); ++i) {
    nlohmann::ordered_json e;
    e["x"] = i;
    if (times_ms[i] > 0)
      e["time"] = times_ms[i];
    else
      e["time"] = "RuntimeFailedConfig";
    e["compile_time"] = total_ms;
    doc["cache"][std::to_string(i)] = e;
  }
  return ReplayData::from_json(doc, "synthetic").value();
}

TEST(Metrics, FractionOfOptimum) {
  const ReplayData d = synthetic({1, 2, 4, 8});
  ReplayTrace a{{1, 2, 3}, {8, 2, 1}, 0};
  ReplayTrace b{{1, 2, 3}, {NAN, 4, 4}, 0};
  std::vector<ReplayTrace> runs{a, b};
  EXPECT_DOUBLE_EQ(fraction_of_optimum(d, runs, 1), (1.0 / 8 + 0.0) / 2);
  EXPECT_DOUBLE_EQ(fraction_of_optimum(d, runs, 2), (0.5 + 0.25) / 2);
  EXPECT_DOUBLE_EQ(fraction_of_optimum(d, runs, 3), (1.0 + 0.25) / 2);
  EXPECT_DOUBLE_EQ(a.best_at_clock(2.5), 2.0);
  EXPECT_TRUE(std::isnan(b.best_at_clock(1.0)));
}

TEST(Metrics, RandomBaselineAndBudget) {
  // 100 valid configurations 1..100 ms and nothing else: median 50.5, optimum 1.
  std::vector<double> t;
  for (int i = 1; i <= 100; ++i) t.push_back(i);
  const ReplayData d = synthetic(t);
  // One draw: the middle of the distribution; many draws: the optimum.
  EXPECT_DOUBLE_EQ(random_search_expected_ms(d, 1),
                   50.0);  // position round(101/2) = 50 from the worst
  EXPECT_DOUBLE_EQ(random_search_expected_ms(d, 1000000), 1.0);
  double prev = 1e9;
  for (std::uint64_t m = 1; m < 200; ++m) {
    const double v = random_search_expected_ms(d, m);
    EXPECT_LE(v, prev);
    prev = v;
  }
  const auto b = methodology_budget(d);
  // t* = 1 + (50.5 - 1) * 0.05 = 3.475: 97 configurations are worse -> ceil(97 / 4) = 25.
  EXPECT_NEAR(b.target_ms, 3.475, 1e-12);
  EXPECT_EQ(b.fevals, 25u);
  EXPECT_DOUBLE_EQ(b.median_total_s, 1.0);
  EXPECT_DOUBLE_EQ(b.end_s, 25.0);
  EXPECT_DOUBLE_EQ(b.start_s, 1.0);
}

TEST(Metrics, MethodologyScoreOfOracleAndWorstRuns) {
  std::vector<double> t;
  for (int i = 1; i <= 100; ++i) t.push_back(i);
  const ReplayData d = synthetic(t);
  ReplayTrace oracle, worst;
  for (int i = 0; i < 40; ++i) {
    oracle.clock_s.push_back(i + 1);
    oracle.time_ms.push_back(i == 0 ? 1.0 : 50.0);
    worst.clock_s.push_back(i + 1);
    worst.time_ms.push_back(100.0 - i);
  }
  std::vector<ReplayTrace> o{oracle}, w{worst};
  EXPECT_NEAR(methodology_score(d, o), 1.0, 1e-12);
  EXPECT_LT(methodology_score(d, w), 0.0);
}

TEST(Metrics, MethodologyScoreInEvaluationsIgnoresTheClock) {
  // With the budget in evaluations, only the order of the objectives counts: the same runs on
  // a clock 1000 times slower score the same, and the oracle still scores 1.
  std::vector<double> t;
  for (int i = 1; i <= 100; ++i) t.push_back(i);
  const ReplayData d = synthetic(t);
  MethodologySettings ms;
  ms.axis = MethodologySettings::Axis::kEvaluations;
  const auto b = methodology_budget(d, ms);
  EXPECT_EQ(b.fevals, 25u);
  EXPECT_EQ(b.start_fevals, 1u);
  ReplayTrace fast, slow, oracle;
  for (int i = 0; i < 30; ++i) {
    const double v = 100.0 - 3.0 * i;
    fast.clock_s.push_back(i + 1);
    fast.time_ms.push_back(v);
    slow.clock_s.push_back(1000.0 * (i + 1));
    slow.time_ms.push_back(v);
    oracle.clock_s.push_back(1e6);
    oracle.time_ms.push_back(i == 0 ? 1.0 : 50.0);
  }
  std::vector<ReplayTrace> f{fast}, s{slow}, o{oracle};
  EXPECT_DOUBLE_EQ(methodology_score(d, f, ms), methodology_score(d, s, ms));
  EXPECT_NE(methodology_score(d, f), methodology_score(d, s));  // on the time axis they differ
  EXPECT_NEAR(methodology_score(d, o, ms), 1.0, 1e-12);
  // A run that stopped early keeps its last best: the oracle cut after one evaluation is 1 too.
  o[0].time_ms.resize(1);
  o[0].clock_s.resize(1);
  EXPECT_NEAR(methodology_score(d, o, ms), 1.0, 1e-12);
}

TEST(Simulate, RunsAreReproducibleAndIndependentOfThreads) {
  auto data = std::make_shared<const ReplayData>(ReplayData::load(kFixture).value());
  SimulationOptions so;
  so.strategy = "random";
  so.evaluations = 30;
  so.runs = 4;
  so.seed = 11;
  so.threads = 1;
  auto one = simulate_strategy(data, so);
  so.threads = 3;
  auto three = simulate_strategy(data, so);
  ASSERT_TRUE(one && three);
  for (std::size_t r = 0; r < 4; ++r) {
    EXPECT_EQ((*one)[r].time_ms.size(), 30u);
    for (std::size_t i = 0; i < 30; ++i) {
      EXPECT_EQ((*one)[r].clock_s[i], (*three)[r].clock_s[i]);
    }
  }
  so.strategy = "nope";
  EXPECT_FALSE(simulate_strategy(data, so));
}

TEST(SharedData, Brute_forcedFilesMatchTheirReadme) {
  const std::string dir = TUNEKIT_SHARED_DATA_DIR "/tuning-caches/";
  // The four files (7.6 MiB) stay outside the repository; a clone without ../shared skips this.
  if (!std::filesystem::exists(dir + "convolution_milo_A100.json.gz"))
    GTEST_SKIP() << dir << " absent (the brute-forced data beside the checkout, ../shared/data)";
  struct Want {
    const char* file;
    std::size_t entries, valid;
    double best_ms;
  };
  for (const Want& w : {Want{"convolution_milo_A100.json.gz", 4362, 4201, 0.5536},
                        Want{"convolution_milo_A100_T4.json.gz", 4362, 4201, 0.5536},
                        Want{"dedispersion_milo_A100.json.gz", 11130, 11130, 68.12},
                        Want{"gemm_clblast_RTX_3090.json.gz", 17956, 17956, 5.658}}) {
    auto d = ReplayData::load(dir + w.file);
    ASSERT_TRUE(d) << d.status().to_string();
    EXPECT_EQ(d->entries().size(), w.entries) << w.file;
    EXPECT_EQ(d->valid_count(), w.valid) << w.file;
    EXPECT_NEAR(d->optimum_ms(), w.best_ms, 0.01) << w.file;
    EXPECT_EQ(d->space()->valid_count(), w.entries) << w.file;
  }
}

}  // namespace
}  // namespace tunekit
