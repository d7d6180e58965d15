// The compare runner on hand-built graphs (through a caller-supplied loader), its
// writers, and (when the dataset zoo builds) a smoke test on a zoo model.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "experiments/compare.h"
#include "tests/expect_error.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

CompareRequest small_request() {
  CompareRequest request;
  request.models = {"dag-a", "dag-b"};
  request.load_graph = [](const std::string& spec) {
    // Names without ':' arrive as "zoo:NAME".
    EXPECT_EQ(spec.rfind("zoo:", 0), 0u);
    OpGraph g = testing::layered_dag(80, spec == "zoo:dag-a" ? 1 : 2);
    g.set_name(spec.substr(4));
    return g;
  };
  request.cluster = "k40x4";
  request.devices = {2, 4};
  request.methods = {"single", "heft", "m-etf", "anneal"};
  request.budget_evals = 30;
  return request;
}

TEST(Compare, RunsEveryCellAndPicksTheFastest) {
  const CompareTable table = run_compare(small_request());
  ASSERT_EQ(table.rows.size(), 4u);
  EXPECT_EQ(table.rows[0].cluster, "k40x2");
  EXPECT_EQ(table.rows[1].cluster, "k40x4");
  EXPECT_EQ(table.rows[1].devices, 4);
  for (const CompareRow& row : table.rows) {
    ASSERT_EQ(row.results.size(), 4u);
    EXPECT_GT(row.lower_bound_us, 0);
    double best = 1e300;
    for (const MethodResult& r : row.results) {
      EXPECT_TRUE(r.ok()) << r.method << ": " << r.reason;
      EXPECT_GE(r.step_time_us, row.lower_bound_us * (1 - 1e-9));
      best = std::min(best, r.step_time_us);
    }
    ASSERT_FALSE(row.winner.empty());
    for (const MethodResult& r : row.results)
      if (r.method == row.winner) EXPECT_EQ(r.step_time_us, best);
  }
}

// The certified bound holds for the analytic simulator in contention mode only:
// in Placeto's mode (whose steps it does not bound) the rows carry no bound, so
// no gap is printed.
TEST(Compare, NoBoundOutsideContentionMode) {
  CompareRequest request = small_request();
  request.devices = {2};
  request.methods = {"single", "m-etf"};
  request.evaluator_options = {{"mode", "placeto"}};
  const CompareTable table = run_compare(request);
  ASSERT_EQ(table.rows.size(), 2u);
  for (const CompareRow& row : table.rows) {
    EXPECT_EQ(row.lower_bound_us, 0);
    EXPECT_EQ(row.bound_name, "");
  }
  request.evaluator_options = {{"slowdown.compute", "0.5"}};
  for (const CompareRow& row : run_compare(request).rows) EXPECT_EQ(row.lower_bound_us, 0);
  request.evaluator_options = {{"slowdown.compute", "1.2"}};
  for (const CompareRow& row : run_compare(request).rows) EXPECT_GT(row.lower_bound_us, 0);
}

TEST(Compare, WritersCarryEveryCell) {
  const CompareTable table = run_compare(small_request());
  std::ostringstream text, md, csv;
  write_compare_text(table, text);
  write_compare_markdown(table, md);
  write_compare_csv(table, csv);
  EXPECT_NE(text.str().find("m-etf"), std::string::npos);
  EXPECT_NE(md.str().find("| model"), std::string::npos);
  int lines = 0;
  for (char ch : csv.str()) lines += ch == '\n';
  EXPECT_EQ(lines, 1 + 4 * 4);
  const nlohmann::json doc = compare_to_json(table);
  EXPECT_EQ(doc["rows"].size(), 4u);
  EXPECT_EQ(doc["rows"][0]["results"].size(), 4u);
  EXPECT_TRUE(doc["rows"][0]["results"][0]["step_time_us"].is_number());
}

// A placement made elsewhere (by hand in the GUI) joins a table as a column.
TEST(Compare, AnOutsideResultJoinsItsRowAndMayWin) {
  CompareTable table;
  table.methods = {"single", "heft"};
  CompareRow a;
  a.model = "m";
  a.cluster = "k40x2";
  a.devices = 2;
  a.results = {{"single", "ok", "", 100, 0, {}}, {"heft", "ok", "", 80, 0, {}}};
  a.winner = "heft";
  CompareRow b = a;
  b.cluster = "k40x4";
  b.devices = 4;
  table.rows = {a, b};

  MethodResult hand{"hand-edited (from single)", "ok", "", 70, 0, {}};
  EXPECT_FALSE(add_method_result(table, "m", "k40x8", hand)) << "no such row";
  EXPECT_FALSE(add_method_result(table, "other", "k40x2", hand));
  EXPECT_EQ(table.methods.size(), 2u) << "a refused result changes nothing";

  ASSERT_TRUE(add_method_result(table, "m", "k40x2", hand));
  ASSERT_EQ(table.methods.size(), 3u);
  EXPECT_EQ(table.methods[2], hand.method);
  EXPECT_EQ(table.rows[0].results[2].step_time_us, 70);
  EXPECT_EQ(table.rows[0].winner, hand.method);
  EXPECT_EQ(table.rows[1].results[2].status, "not run");
  EXPECT_EQ(table.rows[1].winner, "heft");

  // The same method again replaces its cell; a slower one gives the win back.
  hand.step_time_us = 90;
  ASSERT_TRUE(add_method_result(table, "m", "k40x2", hand));
  EXPECT_EQ(table.methods.size(), 3u);
  EXPECT_EQ(table.rows[0].results[2].step_time_us, 90);
  EXPECT_EQ(table.rows[0].winner, "heft");
  // An infeasible one never wins, and the writers carry it.
  StepResult oom;
  oom.feasible = false;
  oom.step_time_us = 1;
  oom.infeasible_reason = "out of memory on gpu0";
  MethodResult bad{"hand-edited (from heft)", "", "", -1, 0, {}};
  record_step(oom, &bad);
  EXPECT_EQ(bad.status, "oom");
  ASSERT_TRUE(add_method_result(table, "m", "k40x4", bad));
  EXPECT_EQ(table.rows[1].winner, "heft");
  std::ostringstream csv;
  write_compare_csv(table, csv);
  EXPECT_NE(csv.str().find("hand-edited (from heft)"), std::string::npos);
  const CompareTable back = compare_from_json(compare_to_json(table), "round trip");
  EXPECT_EQ(back.methods.size(), 4u);
  EXPECT_EQ(back.rows[1].results[3].status, "oom");
}

TEST(Compare, JsonReadsBackWhatItWrote) {
  const CompareTable table = run_compare(small_request());
  const CompareTable back = compare_from_json(compare_to_json(table), "table.json");
  EXPECT_EQ(back.methods, table.methods);
  EXPECT_EQ(back.evaluator, table.evaluator);
  ASSERT_EQ(back.rows.size(), table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    EXPECT_EQ(back.rows[r].model, table.rows[r].model);
    EXPECT_EQ(back.rows[r].devices, table.rows[r].devices);
    EXPECT_EQ(back.rows[r].lower_bound_us, table.rows[r].lower_bound_us);
    EXPECT_EQ(back.rows[r].winner, table.rows[r].winner);
    ASSERT_EQ(back.rows[r].results.size(), table.rows[r].results.size());
    for (size_t m = 0; m < table.rows[r].results.size(); ++m) {
      EXPECT_EQ(back.rows[r].results[m].status, table.rows[r].results[m].status);
      EXPECT_EQ(back.rows[r].results[m].step_time_us, table.rows[r].results[m].step_time_us);
    }
  }
  // A row with fewer results than methods, and a table without rows: errors naming the file.
  nlohmann::json bad = compare_to_json(table);
  bad["rows"][0]["results"].erase(0);
  // A short row.
  testing::expect_error<ParseError>([&] { compare_from_json(bad, "bad.json"); },
                                    {"bad.json", "row 0"});
  EXPECT_THROW(compare_from_json(nlohmann::json{{"methods", table.methods}}, "x.json"), ParseError);
}

TEST(Compare, RejectsUnknownNamesBeforeWork) {
  CompareRequest request = small_request();
  request.methods = {"heft", "no-such-method"};
  EXPECT_THROW(run_compare(request), ConfigError);
  request = small_request();
  request.evaluator = "no-such-evaluator";
  EXPECT_THROW(run_compare(request), ConfigError);
  request = small_request();
  request.budget_evals = -1;
  EXPECT_THROW(run_compare(request), ConfigError);
}

TEST(Compare, MarksGraphsThatCannotFitAsOom) {
  CompareRequest request = small_request();
  request.models = {"huge"};
  request.devices = {2};
  request.load_graph = [](const std::string&) {
    OpGraph g = testing::layered_dag(20, 1);
    for (int op = 0; op < g.num_ops(); ++op) g.mutable_op(op).param_bytes = 5e9;
    return g;
  };
  const CompareTable table = run_compare(request);
  ASSERT_EQ(table.rows.size(), 1u);
  for (const MethodResult& r : table.rows[0].results) {
    EXPECT_EQ(r.status, "oom") << r.method;
    EXPECT_NE(r.reason.find("in total"), std::string::npos);
  }
  EXPECT_TRUE(table.rows[0].winner.empty());
}

TEST(Compare, RestrictsOtherPresets) {
  CompareRequest request = small_request();
  request.models = {"dag-a"};
  request.cluster = "dgx-v100";
  request.devices = {2, 3};
  request.methods = {"m-topo"};
  const CompareTable table = run_compare(request);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].devices, 2);
  EXPECT_EQ(table.rows[1].devices, 3);
}

}  // namespace
}  // namespace aware
