// The audit log: record encoding and parsing, the filters, the writer (rotation by size,
// retention by count, drops when the queue is full, an unwritable path), and reading back
// a garbled file without failing.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "stores/audit_log.hpp"
#include "stores/audit_query.hpp"
#include "stores/audit_record.hpp"

namespace toolport::stores {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct TempDir {
    fs::path path;
    TempDir() {
        char name[] = "/tmp/toolport-audit-test-XXXXXX";
        path = mkdtemp(name);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

AuditRecord record(std::string target, std::string outcome = "ok", std::string principal = "bearer:abc") {
    AuditRecord r;
    r.time = std::chrono::system_clock::now();
    r.method = "tools/call";
    r.target = std::move(target);
    r.principal = std::move(principal);
    r.session = "s1";
    r.outcome = std::move(outcome);
    r.duration_ms = 1.5;
    r.args_sha256 = arguments_digest(Json{{"b", 1}, {"a", 2}});
    return r;
}

std::vector<std::string> lines_of(const fs::path& file) {
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

TEST(AuditRecord, EncodesOneLineWithoutEmptyFieldsAndParsesBack) {
    auto r = record("get_weather", "tool_error");
    r.code = "TIMEOUT";
    r.downstream_calls = 3;
    r.cache = "miss";
    const std::string line = encode_record(r);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    auto parsed = parse_record(line);
    ASSERT_TRUE(parsed);
    EXPECT_EQ((*parsed)["target"], "get_weather");
    EXPECT_EQ((*parsed)["code"], "TIMEOUT");
    EXPECT_EQ((*parsed)["downstream_calls"], 3);
    EXPECT_FALSE(parsed->contains("trace_id"));  // empty: left out
    EXPECT_FALSE(parsed->contains("arguments"));
}

TEST(AuditRecord, ListsEachGuardsVerdictInOrder) {
    auto r = record("search", "tool_error");
    EXPECT_FALSE(parse_record(encode_record(r))->contains("guards"));  // none: left out
    r.guards = {{"pii", "before", "modify", false}, {"policy \"x\"", "before", "deny", true}};
    auto parsed = parse_record(encode_record(r));
    ASSERT_TRUE(parsed);
    EXPECT_EQ((*parsed)["guards"], Json::parse(R"([{"decision": "modify", "guard": "pii", "phase": "before"},
        {"cached": true, "decision": "deny", "guard": "policy \"x\"", "phase": "before"}])"));
}

TEST(AuditRecord, DigestIgnoresKeyOrderAndDiffersForOtherArguments) {
    EXPECT_EQ(arguments_digest(Json::parse(R"({"a":1,"b":[1,2]})")),
              arguments_digest(Json::parse(R"({"b":[1,2],"a":1})")));
    EXPECT_NE(arguments_digest(Json::parse(R"({"a":1})")), arguments_digest(Json::parse(R"({"a":2})")));
    EXPECT_EQ(arguments_digest(Json::object()).size(), 64u);
}

// The writer hashes canonical arguments itself and keeps the last digest: records one after
// the other with other arguments each get their own.
TEST(AuditRecord, HashesEachRecordsCanonicalArguments) {
    auto digest_of = [](const std::string& canonical) {
        auto r = record("t");
        r.args_sha256.clear();
        r.canonical_arguments = canonical;
        auto parsed = parse_record(encode_record(r));
        return parsed ? (*parsed)["args_sha256"].get<std::string>() : std::string();
    };
    const std::string a = R"({"a":1})", b = R"({"a":2})";
    EXPECT_EQ(digest_of(a), arguments_digest(Json::parse(a)));
    EXPECT_EQ(digest_of(b), arguments_digest(Json::parse(b)));
    EXPECT_EQ(digest_of(a), arguments_digest(Json::parse(a)));
    EXPECT_EQ(digest_of("{}"), arguments_digest(Json::object()));
    EXPECT_EQ(digest_of("{}"), arguments_digest(Json::object()));
}

TEST(AuditRecord, KeepsARecordWhoseTextIsNotUtf8) {
    auto r = record(std::string("bad\xff\xfe uri"));
    auto parsed = parse_record(encode_record(r));
    ASSERT_TRUE(parsed);
    EXPECT_TRUE((*parsed)["target"].is_string());
}

// Every value goes through the plain-text fast path or the escaping writer; at every
// position of a long value (the fast path reads eight bytes at a time) and for every byte
// that needs escaping, the line parses back to the same text.
TEST(AuditRecord, EscapesEveryByteThatNeedsItWhereverItIs) {
    const std::string special[] = {"\"", "\\", std::string(1, '\0'), "\x01", "\x1f", "\x7f", "\xc3\xa9", "/"};
    for (const auto& s : special) {
        for (std::size_t at = 0; at <= 17; ++at) {
            std::string value = std::string(at, 'a') + s + std::string(17 - at, 'b');
            auto r = record(value);
            r.principal = value;
            auto parsed = parse_record(encode_record(r));
            ASSERT_TRUE(parsed) << at;
            EXPECT_EQ((*parsed)["target"], value) << at;
            EXPECT_EQ((*parsed)["principal"], value) << at;
        }
    }
    auto r = record("t");
    r.duration_ms = 12.3456;
    EXPECT_NE(encode_record(r).find(R"("duration_ms":12.346,)"), std::string::npos) << encode_record(r);
    r.duration_ms = -1;
    EXPECT_NE(encode_record(r).find(R"("duration_ms":0.000,)"), std::string::npos);
    r.duration_ms = 0.0005;
    EXPECT_NE(encode_record(r).find(R"("duration_ms":0.001,)"), std::string::npos) << encode_record(r);
    EXPECT_EQ(encode_record(r).rfind("{\"", 0), 0u);  // the first member has no comma before it
}

TEST(AuditRecord, RefusesLinesThatAreNotRecords) {
    for (const char* line : {"", "garbage", "[1,2]", "{\"no_ts\":1}", "{\"ts\":5}", "{\"ts\":\"2026-11-28T06:40:17Z\"",
                             "{\"ts\":\"2026-11-28T06:40:17Z\", \"target\": \"x"}) {
        EXPECT_FALSE(parse_record(line)) << line;
    }
}

TEST(AuditRecord, ParsesTimesAndAges) {
    const auto now = std::chrono::system_clock::now();
    auto t = parse_time("2026-11-28T06:40:17.250Z", now);
    ASSERT_TRUE(t);
    EXPECT_EQ(iso_time(*t), "2026-11-28T06:40:17.250Z");
    EXPECT_EQ(iso_time(*parse_time("2026-11-28", now)), "2026-11-28T00:00:00.000Z");
    EXPECT_EQ(*parse_time("15m", now), now - 15min);
    EXPECT_EQ(*parse_time("2d", now), now - 48h);
    for (const char* bad : {"", "yesterday", "2026-13-01", "2026-11-28T25:00:00Z", "15x", "-5m", "2026-11-28T06:40",
                            "99999999999999999999d", "2999-01-01"}) {
        EXPECT_FALSE(parse_time(bad, now)) << bad;
    }
}

TEST(AuditFilter, MatchesEachFieldAndTheTimeRange) {
    const auto now = std::chrono::system_clock::now();
    auto j = *parse_record(encode_record(record("get_weather", "tool_error", "bearer:abc")));
    AuditFilter f;
    EXPECT_TRUE(f.matches(j));
    ASSERT_EQ(set_filter_field(f, "tool", "get_weather", now), "");
    EXPECT_TRUE(f.matches(j));
    ASSERT_EQ(set_filter_field(f, "outcome", "error", now), "");
    EXPECT_TRUE(f.matches(j));
    ASSERT_EQ(set_filter_field(f, "outcome", "ok", now), "");
    EXPECT_FALSE(f.matches(j));
    f.outcome.clear();
    ASSERT_EQ(set_filter_field(f, "principal", "bearer:other", now), "");
    EXPECT_FALSE(f.matches(j));
    f.principal.clear();
    ASSERT_EQ(set_filter_field(f, "since", "1h", now), "");
    EXPECT_TRUE(f.matches(j));
    ASSERT_EQ(set_filter_field(f, "until", "1h", now), "");
    EXPECT_FALSE(f.matches(j));
    EXPECT_NE(set_filter_field(f, "outcome", "maybe", now), "");
    EXPECT_NE(set_filter_field(f, "limit", "-1", now), "");
    EXPECT_NE(set_filter_field(f, "since", "soon", now), "");
    EXPECT_NE(set_filter_field(f, "colour", "red", now), "");
}

TEST(AuditLog, WritesQueuedRecordsAndReadsThemBackFiltered) {
    TempDir dir;
    AuditOptions o;
    o.path = (dir.path / "audit.jsonl").string();
    {
        AuditLog log(o);
        EXPECT_TRUE(log.submit(record("a")));
        EXPECT_TRUE(log.submit(record("b", "tool_error")));
        EXPECT_TRUE(log.submit(record("a", "protocol_error", "oauth:x")));
        log.flush();
        EXPECT_EQ(log.stats().written, 3u);
    }
    EXPECT_EQ(lines_of(o.path).size(), 3u);
    AuditFilter f;
    f.tool = "a";
    auto result = query_audit_files(o.path, f);
    ASSERT_EQ(result.records.size(), 2u);
    EXPECT_EQ(result.records[1]["principal"], "oauth:x");
    f = {};
    f.limit = 1;
    result = query_audit_files(o.path, f);
    ASSERT_EQ(result.records.size(), 1u);
    EXPECT_EQ(result.records[0]["outcome"], "protocol_error");  // the newest
}

TEST(AuditLog, RotatesBySizeAndKeepsTheConfiguredNumberOfFiles) {
    TempDir dir;
    AuditOptions o;
    o.path = (dir.path / "audit.jsonl").string();
    o.rotate_bytes = 600;  // a few records a file
    o.keep_files = 2;
    {
        AuditLog log(o);
        for (int i = 0; i < 40; ++i) {
            log.submit(record("t" + std::to_string(i)));
            if (i % 5 == 4) log.flush();  // several batches, several rotations
        }
        log.flush();
        EXPECT_GT(log.stats().rotations, 2u);
    }
    auto files = audit_files(o.path);
    ASSERT_EQ(files.size(), 3u);  // two rotated, the active one
    EXPECT_EQ(files.back(), o.path);
    for (const auto& f : files) EXPECT_LE(fs::file_size(f), 600u) << f;
    // The newest records are all there, in order, across the files.
    AuditFilter all;
    all.limit = 0;
    auto result = query_audit_files(o.path, all);
    ASSERT_FALSE(result.records.empty());
    EXPECT_EQ(result.records.back()["target"], "t39");
    for (std::size_t i = 1; i < result.records.size(); ++i) {
        EXPECT_EQ(std::stoi(result.records[i]["target"].get<std::string>().substr(1)),
                  std::stoi(result.records[i - 1]["target"].get<std::string>().substr(1)) + 1);
    }
}

TEST(AuditLog, DropsAndCountsWhenTheQueueIsFullNeverBlocking) {
    TempDir dir;
    AuditOptions o;
    o.path = (dir.path / "audit.jsonl").string();
    o.queue_capacity = 4;
    o.flush_interval = 60000ms;  // the writer sleeps: only a full queue wakes it
    AuditLog log(o);
    // Made first, so the submits come faster than the writer can wake and drain four at a
    // time (built in the loop, under the sanitizers each record took longer than a drain,
    // and nothing was ever dropped).
    constexpr int kRecords = 20000;
    std::vector<AuditRecord> burst(kRecords, record("x"));
    int accepted = 0;
    for (auto& r : burst) accepted += log.submit(std::move(r)) ? 1 : 0;
    log.flush();
    const auto stats = log.stats();
    EXPECT_EQ(stats.written, static_cast<std::uint64_t>(accepted));
    EXPECT_EQ(stats.dropped, static_cast<std::uint64_t>(kRecords - accepted));
    EXPECT_GT(stats.dropped, 0u);
}

TEST(AuditLog, AnUnwritablePathIsAClearErrorAtStart) {
    TempDir dir;
    AuditOptions o;
    std::ofstream(dir.path / "file") << "x";
    o.path = (dir.path / "file" / "audit.jsonl").string();  // under a regular file
    try {
        AuditLog log(o);
        FAIL() << "opened";
    } catch (const AuditError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot open the audit file"), std::string::npos);
    }
    o.path = dir.path.string();  // a directory
    EXPECT_THROW(AuditLog{o}, AuditError);
}

TEST(AuditQuery, SkipsGarbledLinesAndATruncatedLastLine) {
    TempDir dir;
    const auto path = dir.path / "audit.jsonl";
    {
        std::ofstream out(path, std::ios::binary);
        out << encode_record(record("a")) << "\n";
        out << "not json at all\n";
        out << std::string("\0\x01\x02\xff", 4) << "\n";
        out << "{\"ts\":\"2026-11-28T06:40:17Z\",\"target\":[1,2,{\"x\"\n";
        out << "\n";
        out << encode_record(record("b")) << "\n";
        out << encode_record(record("c")).substr(0, 30);  // cut short by a crash
    }
    AuditFilter all;
    auto result = query_audit_files(path.string(), all);
    ASSERT_EQ(result.records.size(), 2u);
    EXPECT_EQ(result.records[0]["target"], "a");
    EXPECT_EQ(result.records[1]["target"], "b");
    EXPECT_EQ(result.skipped_lines, 4u);
    // A record whose fields have other types than written is kept and filtered safely.
    std::ofstream(path, std::ios::app) << "\n{\"ts\":\"x\",\"target\":5,\"outcome\":{}}\n";
    all.tool = "a";
    all.since = std::chrono::system_clock::now() - 1h;
    result = query_audit_files(path.string(), all);
    EXPECT_EQ(result.records.size(), 1u);
}

// A limited query reads from the newest line back and stops once it has its records: the
// same records, in the same order, as a pass over everything would keep; across rotated
// files, lines longer than a read block, a file without a final newline, and `until`.
TEST(AuditQuery, TheNewestFromTheEndAcrossFilesAndLongLines) {
    TempDir dir;
    const auto active = dir.path / "audit.jsonl";
    const auto rotated = dir.path / "audit-20261128T064017.123Z-000.jsonl";
    // Whole milliseconds, as records write their times.
    const auto base = std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now() - 1h);
    auto at = [&](int i, std::string target) {
        AuditRecord r = record(std::move(target));
        r.time = base + std::chrono::milliseconds(i);
        return encode_record(r);
    };
    {
        std::ofstream old(rotated, std::ios::binary);
        for (int i = 0; i < 5; ++i) old << at(i, "t" + std::to_string(i)) << "\n";
        std::ofstream now(active, std::ios::binary);
        now << at(5, "t5") << "\n";
        now << at(6, std::string(200 * 1024, 'x')) << "\n";  // longer than three read blocks
        for (int i = 7; i < 10; ++i) now << at(i, "t" + std::to_string(i)) << "\n";
        now << at(10, "t10");  // no newline after the last line
    }
    auto targets = [](const AuditQueryResult& result) {
        std::vector<std::string> out;
        for (const auto& r : result.records) {
            const auto& t = r["target"].get_ref<const std::string&>();
            out.push_back(t.size() > 10 ? "long:" + std::to_string(t.size()) : t);
        }
        return out;
    };
    AuditFilter f;
    f.limit = 3;
    EXPECT_EQ(targets(query_audit_files(active.string(), f)), (std::vector<std::string>{"t8", "t9", "t10"}));
    f.limit = 7;
    EXPECT_EQ(targets(query_audit_files(active.string(), f)),
              (std::vector<std::string>{"t4", "t5", "long:204800", "t7", "t8", "t9", "t10"}));
    f.limit = 0;
    auto all = query_audit_files(active.string(), f);
    ASSERT_EQ(all.records.size(), 11u);
    EXPECT_EQ(all.records.front()["target"], "t0");
    // Older than t8's time, the newest two: what a page of a longer history asks.
    f.limit = 2;
    f.until = base + 8ms;
    EXPECT_EQ(targets(query_audit_files(active.string(), f)), (std::vector<std::string>{"long:204800", "t7"}));
    f.tool = "t3";
    f.limit = 10;
    EXPECT_EQ(targets(query_audit_files(active.string(), f)), (std::vector<std::string>{"t3"}));
}

TEST(AuditQuery, NoFileIsAnEmptyResult) {
    TempDir dir;
    auto result = query_audit_files((dir.path / "none.jsonl").string(), AuditFilter{});
    EXPECT_TRUE(result.records.empty());
}

TEST(AuditFollower, ReadsNewRecordsAcrossARotation) {
    TempDir dir;
    AuditOptions o;
    o.path = (dir.path / "audit.jsonl").string();
    o.rotate_bytes = 1000;  // a few records a file
    AuditLog log(o);
    log.submit(record("before"));
    log.flush();
    AuditFollower follower(o.path, AuditFilter{});
    EXPECT_TRUE(follower.poll().empty());  // starts at the end
    std::vector<std::string> seen;
    for (int i = 0; i < 12; ++i) {
        log.submit(record("n" + std::to_string(i)));
        log.flush();
        for (auto& r : follower.poll()) seen.push_back(r["target"]);
    }
    for (auto& r : follower.poll()) seen.push_back(r["target"]);
    EXPECT_GT(log.stats().rotations, 0u);
    ASSERT_EQ(seen.size(), 12u);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(seen[i], "n" + std::to_string(i));
}

// Two rotations between polls: the file rotated in between is read whole, none of its
// records missed.
TEST(AuditFollower, ReadsAFileRotatedWhollyBetweenTwoPolls) {
    TempDir dir;
    const auto path = dir.path / "audit.jsonl";
    auto append = [](const fs::path& file, const std::string& target) {
        std::ofstream out(file, std::ios::app);
        out << encode_record(record(target)) << "\n";
    };
    append(path, "old");
    AuditFollower follower(path.string(), AuditFilter{});
    EXPECT_TRUE(follower.poll().empty());
    append(path, "a");
    fs::rename(path, dir.path / "audit-20261128T064017.100Z-000.jsonl");
    append(path, "b");
    append(path, "c");
    fs::rename(path, dir.path / "audit-20261128T064017.200Z-000.jsonl");
    append(path, "d");
    std::vector<std::string> seen;
    for (auto& r : follower.poll()) seen.push_back(r["target"]);
    EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d"}));
    append(path, "e");
    seen.clear();
    for (auto& r : follower.poll()) seen.push_back(r["target"]);
    EXPECT_EQ(seen, (std::vector<std::string>{"e"}));
}

}  // namespace
}  // namespace toolport::stores
