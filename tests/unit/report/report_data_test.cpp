// The report's data from a database: winners, speed-ups over Default and the best single
// library, runner-ups, searches and stored comparisons; and the page it renders.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "tunekit/records/db_trials.hpp"
#include "tunekit/records/tuning_db.hpp"
#include "tunekit/report/chart_library.hpp"
#include "tunekit/report/report.hpp"

namespace tunekit::report {
namespace {

using nlohmann::json;

class ReportData : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("tunekit_report_test_" + std::to_string(::getpid()) + ".db"))
                .string();
    auto db = TuningDb::open(path_, TuningDb::Access::kReadWrite);
    ASSERT_TRUE(db) << db.status().message();
    db_ = std::move(*db);
  }
  void TearDown() override {
    db_.reset();
    for (const char* s : {"", "-wal", "-shm"}) std::remove((path_ + s).c_str());
  }
  void add(const std::string& params, const std::string& winner, double ms,
           std::vector<DbCandidateTime> cands) {
    DbResult r{"GemmTunableOp_float_NN", params, winner, ms, std::to_string(ms), ""};
    ASSERT_TRUE(db_->add_result(env_, r, DbProvenance{"host", "tuned", ""}, cands));
  }
  std::string path_;
  std::unique_ptr<TuningDb> db_;
  DbEnvironment env_ = {{"TUNEKIT_VERSION", "0.1.0"},
                        {"CPU_MODEL", "Test CPU"},
                        {"THREADS", "2"},
                        {"BLIS_VERSION", "0.9"}};
};

TEST_F(ReportData, ProblemsCarryWinnerSpeedupsAndRunnerUp) {
  add("nn_64_32_48_ld_64_48_64", "blis", 1.0,
      {{"Default", "measured", 2.0},
       {"blis", "measured", 1.0},
       {"eigen", "measured", 1.5},
       {"native_f32[mr=8]", "measured", 1.2},
       {"onednn", "unsupported", NAN}});
  add("nn_96_17_33_ld_96_33_96", "native_f32[mr=16]", 1.0,
      {{"Default", "measured", 4.0},
       {"blis", "measured", 3.0},
       {"eigen", "measured", 2.5},
       {"native_f32[mr=16]", "measured", 1.0}});
  json data = {{"environments", json::array()},
               {"ops", json::array()},
               {"searches", json::array()},
               {"comparisons", json::array()}};
  ASSERT_TRUE(collect_database(*db_, "test.db", data).is_ok());
  ASSERT_EQ(data["ops"].size(), 1u);
  const json& op = data["ops"][0];
  // Time over the winner's: blis 1 and 3 (geometric mean sqrt 3), eigen 1.5 and 2.5 (sqrt
  // 3.75), Default 2 and 4; tunekit's native kernels are no library.
  EXPECT_EQ(op["best_library"], "blis");
  EXPECT_NEAR(op["best_library_over_tuned"].get<double>(), std::sqrt(3.0), 1e-9);
  const json& p0 = op["problems"][0];
  EXPECT_EQ(p0["winner"], "blis");
  EXPECT_DOUBLE_EQ(p0["speedup_default"].get<double>(), 2.0);
  EXPECT_EQ(p0["runner_up"], "native_f32[mr=8]");
  EXPECT_NEAR(p0["gflops"].get<double>(), 2.0 * 64 * 32 * 48 / 1e6, 1e-9);
  EXPECT_TRUE(p0["candidates"][4]["time_ms"].is_null());
  ASSERT_EQ(data["environments"].size(), 1u);
  EXPECT_EQ(data["environments"][0]["cpu_model"], "Test CPU");
  EXPECT_EQ(data["environments"][0]["libraries"]["BLIS_VERSION"], "0.9");
}

TEST_F(ReportData, ComparisonsAreStoredAndGroupedByRun) {
  std::vector<DbComparison> rows(3);
  for (DbComparison& r : rows) {
    r.run = "run-1";
    r.tool = "compare";
    r.op_signature = "GemmTunableOp_float_NN";
    r.params_signature = "nn_64_32_48_ld_64_48_64";
  }
  rows[0].contender = "tuned", rows[0].kind = "tuned", rows[0].time_ms = 1.0;
  rows[1].contender = "Default", rows[1].kind = "default", rows[1].time_ms = 2.0;
  rows[2].contender = "blis", rows[2].kind = "library";  // failed: NaN
  auto stored = db_->add_comparisons(env_, rows);
  ASSERT_TRUE(stored) << stored.status().message();
  EXPECT_EQ(*stored, 3u);
  auto back = db_->comparisons();
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 3u);
  EXPECT_TRUE(std::isnan((*back)[2].time_ms));
  json data = {{"environments", json::array()},
               {"ops", json::array()},
               {"searches", json::array()},
               {"comparisons", json::array()}};
  ASSERT_TRUE(collect_database(*db_, "test.db", data).is_ok());
  ASSERT_EQ(data["comparisons"].size(), 1u);
  const json& p =
      data["comparisons"][0]["problems"]["GemmTunableOp_float_NN,nn_64_32_48_ld_64_48_64"];
  EXPECT_EQ(p["Default"]["time_ms"], 2.0);
  EXPECT_TRUE(p["blis"]["time_ms"].is_null());
}

TEST_F(ReportData, SearchesOfAnImportedLogHaveConvergenceAndKnobs) {
  ReportSources s;
  s.logs = {std::string(TUNEKIT_TEST_DATA_DIR) + "/autotvm/tophub_lines.log"};
  auto data = collect_report(s);
  ASSERT_TRUE(data) << data.status().message();
  ASSERT_FALSE((*data)["searches"].empty());
  const json& search = (*data)["searches"][0];
  EXPECT_GE(search["trials"].get<int>(), 1);
  EXPECT_FALSE(search["best_by_trial"].empty());
  EXPECT_FALSE(search["importance"].empty());
}

// A native search as TuningStore::add_search_trials stores it: task the template, the problem
// in the workload, the failure's reason in the line.
TEST_F(ReportData, AStoredNativeSearchHasEveryView) {
  auto space = std::make_shared<ConfigSpace>();
  ASSERT_TRUE(space->define_knob("mr", {nlohmann::json(8), nlohmann::json(16)}));
  ASSERT_TRUE(space->define_knob("kc", {nlohmann::json(128), nlohmann::json(256)}));
  auto task = std::make_shared<Task>();
  task->name = "native_f32";
  task->args = json::array({"GemmTunableOp_float_NN", "nn_64_32_48_ld_64_48_64"});
  task->target = "llvm -mcpu=test";
  task->space = space;
  std::vector<MeasureInput> inputs;
  std::vector<MeasureResult> results;
  for (std::uint64_t i = 0; i < 4; ++i) {
    inputs.push_back(MeasureInput{task, space->config_at(i)});
    MeasureResult r;
    r.costs_s = {1e-3 * static_cast<double>(i + 1)};
    r.timestamp_s = 1000.0 + static_cast<double>(i);
    results.push_back(r);
  }
  results[3].costs_s.clear();
  results[3].error_no = MeasureErrorNo::kWrongAnswer;
  results[3].error_msg = "max |C - C_ref| 0.5 above the tolerance";
  ASSERT_TRUE(add_measured_trials(*db_, env_, inputs, results, DbProvenance{"host", "tuned", ""}));
  json data = {{"environments", json::array()},
               {"ops", json::array()},
               {"searches", json::array()},
               {"comparisons", json::array()}};
  ASSERT_TRUE(collect_database(*db_, "test.db", data).is_ok());
  ASSERT_EQ(data["searches"].size(), 1u);
  const json& search = data["searches"][0];
  EXPECT_EQ(search["task"], "native_f32");
  EXPECT_NE(search["workload"].get<std::string>().find("nn_64_32_48_ld_64_48_64"),
            std::string::npos);
  EXPECT_EQ(search["problem"], "GemmTunableOp_float_NN,nn_64_32_48_ld_64_48_64");
  EXPECT_EQ(search["trials"], 4);
  EXPECT_EQ(search["failed"], 1);
  EXPECT_EQ(search["best_by_trial"].size(), 4u);  // the failed trial keeps the best so far
  EXPECT_EQ(search["best_by_time"].size(), 4u);
  EXPECT_EQ(search["best_by_time"][3][0], 3.0);  // seconds since the first trial
  EXPECT_FALSE(search["histogram"]["counts"].empty());
  EXPECT_EQ(search["importance"].size(), 2u);
  EXPECT_EQ(search["two_knobs"]["cells"].size(), 3u);
  ASSERT_EQ(search["failures"].size(), 1u);
  EXPECT_EQ(search["failures"][0]["reason"], "max |C - C_ref| 0.5 above the tolerance");
}

// The two-knob view's axes: numbers in numeric order (16 before 112), strings without quotes.
TEST_F(ReportData, TheTwoKnobViewOrdersNumbersAndUnquotesStrings) {
  auto space = std::make_shared<ConfigSpace>();
  ASSERT_TRUE(space->define_knob("mr", {json(128), json(16), json(112)}));
  ASSERT_TRUE(space->define_knob("tile", {json("8x4"), json("32x12")}));
  auto task = std::make_shared<Task>();
  task->name = "native_f32";
  task->args = json::array({"GemmTunableOp_float_NN", "nn_64_32_48_ld_64_48_64"});
  task->target = "llvm -mcpu=test";
  task->space = space;
  std::vector<MeasureInput> inputs;
  std::vector<MeasureResult> results;
  for (std::uint64_t i = 0; i < 6; ++i) {
    inputs.push_back(MeasureInput{task, space->config_at(i)});
    MeasureResult r;
    r.costs_s = {1e-3 * static_cast<double>(1 + i % 3) * static_cast<double>(1 + 3 * (i / 3))};
    r.timestamp_s = 1000.0 + static_cast<double>(i);
    results.push_back(r);
  }
  ASSERT_TRUE(add_measured_trials(*db_, env_, inputs, results, DbProvenance{"host", "tuned", ""}));
  json data = {{"environments", json::array()},
               {"ops", json::array()},
               {"searches", json::array()},
               {"comparisons", json::array()}};
  ASSERT_TRUE(collect_database(*db_, "test.db", data).is_ok());
  ASSERT_EQ(data["searches"].size(), 1u);
  const json& view = data["searches"][0]["two_knobs"];
  ASSERT_TRUE(view.is_object()) << data["searches"][0].dump();
  const bool mr_on_x = view["x"] == "mr";
  const json& mr = mr_on_x ? view["x_values"] : view["y_values"];
  const json& tile = mr_on_x ? view["y_values"] : view["x_values"];
  EXPECT_EQ(mr, json::array({"16", "112", "128"}));
  EXPECT_EQ(tile, json::array({"32x12", "8x4"}));
  ASSERT_EQ(view["cells"].size(), 6u);
  for (const json& cell : view["cells"]) {
    const json& x = cell[0];
    const json& y = cell[1];
    EXPECT_TRUE(std::find(view["x_values"].begin(), view["x_values"].end(), x) !=
                view["x_values"].end())
        << cell.dump();
    EXPECT_TRUE(std::find(view["y_values"].begin(), view["y_values"].end(), y) !=
                view["y_values"].end())
        << cell.dump();
  }
}

TEST_F(ReportData, ThePageInlinesEverythingAndRequestsNothing) {
  if (!chart_library_source()) GTEST_SKIP() << "Chart.js is not installed (libjs-chart.js)";
  json data = {{"title", "t </script> <b>"},
               {"generated", "now"},
               {"tunekit_version", "x"},
               {"environments", json::array()},
               {"ops", json::array()},
               {"searches", json::array()},
               {"comparisons", json::array({"</script>"})}};
  auto page = render_report_html(data);
  ASSERT_TRUE(page) << page.status().message();
  EXPECT_NE(page->find("Content-Security-Policy"), std::string::npos);
  EXPECT_EQ(page->find("src=\"http"), std::string::npos);
  EXPECT_EQ(page->find("<script src"), std::string::npos);
  EXPECT_NE(page->find("<title>t &lt;/script&gt; &lt;b&gt;</title>"), std::string::npos);
  // The data's "</script>" cannot end its element early.
  EXPECT_NE(page->find("[\"\\u003c/script\\u003e\"]"), std::string::npos);
}

// "<!--<script>" in a name would make the HTML parser swallow the page's scripts (a blank page):
// the data element holds no '<', '>' or '&' at all, and reads back as the same data.
TEST(ReportPage, NamesWithMarkupStayInsideTheDataElement) {
  if (!chart_library_source()) GTEST_SKIP() << "Chart.js is not installed (libjs-chart.js)";
  const json data = {{"title", "t"},
                     {"generated", "now"},
                     {"tunekit_version", "x"},
                     {"environments", json::array()},
                     {"ops", json::array({{{"op", "GemmTunableOp_float_NN"},
                                           {"problems", json::array({{{"winner", "<!--<script>"},
                                                                      {"params", "a&b > c"}}})}}})},
                     {"searches", json::array()},
                     {"comparisons", json::array({"</script><!--", "<script>"})}};
  auto page = render_report_html(data);
  ASSERT_TRUE(page) << page.status().message();
  const std::string open = "<script type=\"application/json\" id=\"tunekit-data\">";
  const std::size_t begin = page->find(open);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t first = begin + open.size();
  const std::size_t end = page->find("</script>", first);
  ASSERT_NE(end, std::string::npos);
  const std::string text = page->substr(first, end - first);
  EXPECT_EQ(text.find_first_of("<>&"), std::string::npos) << text;
  EXPECT_EQ(json::parse(text), data);
  // Chart.js and the page's script follow, untouched.
  EXPECT_EQ(page->find("<!--"), std::string::npos);
  EXPECT_NE(page->find("document.getElementById('tunekit-data')", end), std::string::npos);
}

// Write errors carry their reason, for files, folders and devices alike.
TEST(ReportPage, WriteErrorsNameTheReason) {
  if (!chart_library_source()) GTEST_SKIP() << "Chart.js is not installed (libjs-chart.js)";
  const json data = {{"title", "t"},
                     {"generated", "now"},
                     {"tunekit_version", "x"},
                     {"environments", json::array()},
                     {"ops", json::array()},
                     {"searches", json::array()},
                     {"comparisons", json::array()}};
  const Status missing = write_report(data, "/nonexistent/dir/r.html");
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_EQ(missing.message(),
            "cannot write the report '/nonexistent/dir/r.html': No such file or directory");
  const std::string folder = std::filesystem::temp_directory_path().string();
  EXPECT_NE(write_report(data, folder).message().find("Is a directory"), std::string::npos);
  std::error_code ec;
  if (std::filesystem::is_character_file("/dev/full", ec)) {
    EXPECT_EQ(write_report(data, "/dev/full").message(),
              "cannot write the report '/dev/full': No space left on device");
    EXPECT_TRUE(std::filesystem::is_character_file("/dev/full", ec));
  }
}

// The output may not be any input: same path, another spelling, a link, a database's WAL.
TEST(ReportPage, TheOutputIsNoInput) {
  const auto folder =
      std::filesystem::temp_directory_path() / ("tunekit_report_io_" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  const std::string input = (folder / "in.csv").string();
  std::FILE* f = std::fopen(input.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  std::filesystem::create_symlink(input, folder / "link.csv");
  ReportSources s;
  s.results_files = {input};
  s.databases = {(folder / "t.db").string()};
  for (const std::string& out : {input, (folder / "." / "in.csv").string(),
                                 (folder / "link.csv").string(), (folder / "t.db-wal").string()}) {
    const Status st = check_output_is_not_an_input(s, out);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << out;
    EXPECT_NE(st.message().find("is its input"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(check_output_is_not_an_input(s, (folder / "r.html").string()).is_ok());
  std::filesystem::remove_all(folder);
}

TEST(ChartLibrary, AMissingFileNamesThePackage) {
  ::setenv("TUNEKIT_CHARTJS", "/nonexistent/chart.min.js", 1);
  auto js = chart_library_source();
  ::unsetenv("TUNEKIT_CHARTJS");
  ASSERT_FALSE(js);
  EXPECT_NE(js.status().message().find("apt-get install libjs-chart.js"), std::string::npos);
  EXPECT_NE(js.status().message().find("/nonexistent/chart.min.js"), std::string::npos);
}

}  // namespace
}  // namespace tunekit::report
