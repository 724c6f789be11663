// util: base64 / base64url, sanitize_for_message, the HTTP text checks, ASCII case, JSON
// Pointer tokens and session ids.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "util/ascii.hpp"
#include "util/base64.hpp"
#include "util/digest.hpp"
#include "util/http_text.hpp"
#include "util/json_pointer.hpp"
#include "util/sanitize.hpp"
#include "util/session_id.hpp"
#include "util/state_dir.hpp"

using namespace toolport::util;

namespace {

// Every byte value, so round trips see '+', '/', '-', '_' and high bytes.
std::string sample_bytes(std::size_t n, int salt) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>((i * 97 + salt * 31 + 251) & 0xFF);
    return s;
}

bool valid_utf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (std::size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        }
        i += n;
    }
    return true;
}

}  // namespace

// ---- base64 ---------------------------------------------------------------------------------

TEST(Base64, Rfc4648Vectors) {
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("f"), "Zg==");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("foo"), "Zm9v");
    EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
    EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
    EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");

    EXPECT_EQ(base64_decode(""), std::string(""));
    EXPECT_EQ(base64_decode("Zg=="), std::string("f"));
    EXPECT_EQ(base64_decode("Zm8="), std::string("fo"));
    EXPECT_EQ(base64_decode("Zm9v"), std::string("foo"));
    EXPECT_EQ(base64_decode("Zm9vYg=="), std::string("foob"));
    EXPECT_EQ(base64_decode("Zm9vYmE="), std::string("fooba"));
    EXPECT_EQ(base64_decode("Zm9vYmFy"), std::string("foobar"));
    EXPECT_EQ(base64_decode("SGVsbG8="), std::string("Hello"));
}

TEST(Base64, UrlVectorsAreUnpadded) {
    EXPECT_EQ(base64url_encode(""), "");
    EXPECT_EQ(base64url_encode("f"), "Zg");
    EXPECT_EQ(base64url_encode("fo"), "Zm8");
    EXPECT_EQ(base64url_encode("foo"), "Zm9v");
    EXPECT_EQ(base64url_encode("foob"), "Zm9vYg");
    EXPECT_EQ(base64url_encode("fooba"), "Zm9vYmE");
    EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
    EXPECT_EQ(base64url_decode("Zm9vYg"), std::string("foob"));
    EXPECT_EQ(base64url_decode("Zm9vYmE"), std::string("fooba"));
}

TEST(Base64, AlphabetsDifferInTheLastTwoCharacters) {
    const std::string bytes("\xfb\xff\xbf", 3);
    EXPECT_EQ(base64_encode(bytes), "+/+/");
    EXPECT_EQ(base64url_encode(bytes), "-_-_");
    EXPECT_EQ(base64_decode("+/+/"), bytes);
    EXPECT_EQ(base64url_decode("-_-_"), bytes);
    EXPECT_FALSE(base64_decode("-_-_").has_value());
    EXPECT_FALSE(base64url_decode("+/+/").has_value());
    EXPECT_EQ(base64_encode(std::string("\xff", 1)), "/w==");
    EXPECT_EQ(base64url_encode(std::string("\xff", 1)), "_w");
    EXPECT_EQ(base64_encode(std::string(3, '\0')), "AAAA");
}

TEST(Base64, RoundTripsLengthsZeroToTen) {
    for (std::size_t n = 0; n <= 10; ++n) {
        for (int salt = 0; salt < 8; ++salt) {
            auto bytes = sample_bytes(n, salt);
            auto std_text = base64_encode(bytes);
            EXPECT_EQ(std_text.size(), (n + 2) / 3 * 4) << n;
            EXPECT_EQ(base64_decode(std_text), bytes) << n << " " << std_text;
            auto url_text = base64url_encode(bytes);
            EXPECT_EQ(url_text.size(), (n * 4 + 2) / 3) << n;
            EXPECT_EQ(url_text.find('='), std::string::npos);
            EXPECT_EQ(base64url_decode(url_text), bytes) << n << " " << url_text;
        }
    }
}

TEST(Base64, RoundTripsEveryByteValue) {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    EXPECT_EQ(base64_decode(base64_encode(all)), all);
    EXPECT_EQ(base64url_decode(base64url_encode(all)), all);
}

TEST(Base64, DecodeRejectsMissingOrBadPadding) {
    EXPECT_FALSE(base64_decode("SGVsbG8").has_value());  // padding required
    EXPECT_FALSE(base64_decode("Zg").has_value());
    EXPECT_FALSE(base64_decode("Zg=").has_value());
    EXPECT_FALSE(base64_decode("Zg===").has_value());
    EXPECT_FALSE(base64_decode("SGVsbG8==").has_value());
    EXPECT_FALSE(base64_decode("SG=sbG8=").has_value());  // '=' in the middle
    EXPECT_FALSE(base64_decode("=SGV").has_value());
    EXPECT_FALSE(base64_decode("====").has_value());
    EXPECT_FALSE(base64_decode("A===").has_value());
    EXPECT_FALSE(base64_decode("Z").has_value());
    EXPECT_FALSE(base64_decode("Zm9vY").has_value());
}

TEST(Base64, DecodeRejectsBadCharacters) {
    EXPECT_FALSE(base64_decode("SGVs!!!bG8=").has_value());
    EXPECT_FALSE(base64_decode("SGVs!!bG8=").has_value());
    EXPECT_FALSE(base64_decode("SGVs!!!!").has_value());
    EXPECT_FALSE(base64_decode("SGVs bG8").has_value());  // right length, bad character
    EXPECT_FALSE(base64_decode("SGVs\nbG8").has_value());
    EXPECT_FALSE(base64_decode("SGVsbG8!").has_value());
    EXPECT_FALSE(base64_decode(std::string("SGV\0", 4)).has_value());
    EXPECT_FALSE(base64_decode("SGV\xc3").has_value());
    EXPECT_FALSE(base64url_decode("Zm9v!A").has_value());
    EXPECT_FALSE(base64url_decode("Zm9vYg==").has_value());  // base64url here is unpadded
    EXPECT_FALSE(base64url_decode("Zm9vY").has_value());     // 5 chars cannot encode whole bytes
}

// ---- sanitize_for_message -----------------------------------------------------------------

TEST(Sanitize, PlainTextIsUnchanged) {
    EXPECT_EQ(sanitize_for_message(""), "");
    EXPECT_EQ(sanitize_for_message("tool \"echo\" failed: bad input"), "tool \"echo\" failed: bad input");
    EXPECT_EQ(sanitize_for_message("caf\xc3\xa9"), "caf\xc3\xa9");
    EXPECT_EQ(sanitize_for_message("/etc/passwd"), "/etc/passwd");
    EXPECT_EQ(sanitize_for_message("/tmp/home/alice"), "/tmp/home/alice");
}

TEST(Sanitize, HidesHomeDirectories) {
    EXPECT_EQ(sanitize_for_message("/home/alice/x"), "~/x");
    EXPECT_EQ(sanitize_for_message("/root/.ssh"), "~/.ssh");
    EXPECT_EQ(sanitize_for_message("/root"), "~");
    EXPECT_EQ(sanitize_for_message("/home/alice"), "~");
    EXPECT_EQ(sanitize_for_message("/Users/bob/Library/x.db"), "~/Library/x.db");
    EXPECT_EQ(sanitize_for_message("cannot open /home/alice/secret.txt: denied"), "cannot open ~/secret.txt: denied");
    EXPECT_EQ(sanitize_for_message("file \"/home/bob/a b\" missing"), "file \"~/a b\" missing");
    EXPECT_EQ(sanitize_for_message("path='/root/key'"), "path='~/key'");
    EXPECT_EQ(sanitize_for_message("dir=/home/carol/d"), "dir=~/d");
    EXPECT_EQ(sanitize_for_message("(/home/dave/e)"), "(~/e)");
    EXPECT_EQ(sanitize_for_message("a:/home/eve/f"), "a:~/f");
    EXPECT_EQ(sanitize_for_message("/home/a/x and /root/y"), "~/x and ~/y");
    // Not a home directory, or not at the start of a path.
    EXPECT_EQ(sanitize_for_message("/rootfs/x"), "/rootfs/x");
    EXPECT_EQ(sanitize_for_message("x/home/alice/y"), "x/home/alice/y");
    // No user name leaks.
    EXPECT_EQ(sanitize_for_message("/home/alice/x").find("alice"), std::string::npos);
}

TEST(Sanitize, ReplacesControlCharacters) {
    EXPECT_EQ(sanitize_for_message("a\nb\tc\rd"), "a b c d");
    EXPECT_EQ(sanitize_for_message(std::string("x\0y", 3)), "x y");
    EXPECT_EQ(sanitize_for_message("\x1b[31mred\x1b[0m"), " [31mred [0m");
    EXPECT_EQ(sanitize_for_message("del\x7f"), "del ");
}

TEST(Sanitize, TruncatesLongText) {
    std::string long_text(600, 'a');
    auto out = sanitize_for_message(long_text);
    EXPECT_EQ(out, std::string(500, 'a') + "\xe2\x80\xa6");  // "…"

    EXPECT_EQ(sanitize_for_message("abcdef", 3), "abc\xe2\x80\xa6");
    EXPECT_EQ(sanitize_for_message("abc", 3), "abc");  // exactly the limit: no mark
    EXPECT_EQ(sanitize_for_message(std::string(500, 'b')), std::string(500, 'b'));
    EXPECT_EQ(sanitize_for_message(std::string(501, 'b')), std::string(500, 'b') + "\xe2\x80\xa6");
}

TEST(Sanitize, TruncationKeepsUtf8Valid) {
    // "a" followed by two-byte characters: a byte-counted cut at 2 lands inside "é".
    std::string text = "a";
    for (int i = 0; i < 10; ++i) text += "\xc3\xa9";
    auto out = sanitize_for_message(text, 2);
    EXPECT_TRUE(valid_utf8(out));
}

TEST(Digest, Sha256HexMatchesTheStandardVectors) {
    EXPECT_EQ(toolport::util::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(toolport::util::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    // Many digests from several threads share the one fetched implementation.
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([] {
            for (int i = 0; i < 200; ++i)
                EXPECT_EQ(toolport::util::sha256_hex("abc"),
                          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        });
    }
    for (auto& th : threads) th.join();
}

TEST(HttpText, CaseIsIgnoredForAsciiLettersOnly) {
    EXPECT_TRUE(iequals_ascii("Content-Type", "content-type"));
    EXPECT_TRUE(iequals_ascii("", ""));
    EXPECT_FALSE(iequals_ascii("Content-Type", "content-typ"));
    EXPECT_FALSE(iequals_ascii("[", "{"));        // 0x5B and 0x7B differ by 0x20 but are not letters
    EXPECT_FALSE(iequals_ascii("\xC4", "\xE4"));  // nor are Latin-1 bytes, whatever the locale
    EXPECT_TRUE(starts_with_ascii_nocase("Text/Event-Stream; charset=utf-8", "text/event-stream"));
    EXPECT_FALSE(starts_with_ascii_nocase("text", "text/event-stream"));
}

TEST(HttpText, TokensAreRfc9110Tokens) {
    EXPECT_TRUE(is_http_token("X-Api-Key"));
    EXPECT_TRUE(is_http_token("!#$%&'*+-.^_`|~09azAZ"));
    EXPECT_FALSE(is_http_token(""));
    for (std::string bad : {"X Api", "X:Api", "X\r\nInjected", "caf\xC3\xA9", "a/b", "a\"b"}) {
        EXPECT_FALSE(is_http_token(bad)) << bad;
    }
}

TEST(HttpText, ControlCharactersExceptTabAreFound) {
    EXPECT_FALSE(has_control_chars("Bearer abc\tdef \xC3\xA9"));
    EXPECT_TRUE(has_control_chars("abc\r\nSet-Cookie: x"));
    EXPECT_TRUE(has_control_chars(std::string("a\0b", 3)));
    EXPECT_TRUE(has_control_chars("a\x7F"));
}

TEST(AsciiCase, LowersOnlyAsciiLetters) {
    EXPECT_EQ(to_lower_ascii("Content-Type: TEXT/Plain; X=Y"), "content-type: text/plain; x=y");
    EXPECT_EQ(to_lower_ascii(""), "");
    // Bytes outside A-Z, UTF-8 sequences included, are left as they are.
    EXPECT_EQ(to_lower_ascii("\xC3\x89T\xC3\x89 @[`{"), "\xC3\x89t\xC3\x89 @[`{");
    EXPECT_EQ(to_lower_ascii('Q'), 'q');
    EXPECT_EQ(to_lower_ascii('\xC9'), '\xC9');
}

TEST(JsonPointer, SplitsAndUnescapesTokens) {
    EXPECT_EQ(parse_json_pointer(""), std::vector<std::string>{});
    EXPECT_EQ(parse_json_pointer("/"), std::vector<std::string>{""});
    EXPECT_EQ(parse_json_pointer("/a/b~1c/~0d~01"), (std::vector<std::string>{"a", "b/c", "~d~1"}));
    EXPECT_EQ(parse_json_pointer("/a//b"), (std::vector<std::string>{"a", "", "b"}));
}

TEST(JsonPointer, RefusesMalformedPointers) {
    EXPECT_EQ(parse_json_pointer("a/b"), std::nullopt);   // no leading "/"
    EXPECT_EQ(parse_json_pointer("/a~2"), std::nullopt);  // "~" must be followed by 0 or 1
    EXPECT_EQ(parse_json_pointer("/a~"), std::nullopt);
}

TEST(JsonPointer, EscapedTokensSplitBackToThemselves) {
    const std::vector<std::string> tokens = {"plain", "with/slash", "with~tilde", "~1", "", "/~"};
    std::string pointer;
    for (const auto& token : tokens) {
        pointer += "/";
        append_pointer_token(pointer, token);
    }
    EXPECT_EQ(pointer, "/plain/with~1slash/with~0tilde/~01//~1~0");
    EXPECT_EQ(parse_json_pointer(pointer), tokens);
}

TEST(SessionId, VisibleAsciiWithinTheCallersBound) {
    EXPECT_TRUE(valid_session_id("0f3e2a9c-1b2d-4e5f", 256));
    EXPECT_TRUE(valid_session_id("!~", 2));
    EXPECT_FALSE(valid_session_id("abc", 2));
    EXPECT_TRUE(valid_session_id(std::string(1024, 'a'), 1024));
    EXPECT_FALSE(valid_session_id(std::string(1025, 'a'), 1024));
    EXPECT_FALSE(valid_session_id("", 256));
    EXPECT_FALSE(valid_session_id("a b", 256));
    EXPECT_FALSE(valid_session_id("a\x7f", 256));
    EXPECT_FALSE(valid_session_id("caf\xC3\xA9", 256));
}

TEST(StateDir, XdgStateHomeElseHomeOnlyWhenAbsolute) {
    // The test run's own XDG_STATE_HOME (state_home_environment.cpp) is put back at the end.
    const std::string saved_state = std::getenv("XDG_STATE_HOME") ? std::getenv("XDG_STATE_HOME") : "";
    const std::string saved_home = std::getenv("HOME") ? std::getenv("HOME") : "";
    ::setenv("XDG_STATE_HOME", "/var/state", 1);
    ::setenv("HOME", "/home/ann", 1);
    EXPECT_EQ(toolport::util::state_path("pins.json"), "/var/state/toolport/pins.json");
    ::setenv("XDG_STATE_HOME", "relative/state", 1);  // ignored: it would move with the directory
    EXPECT_EQ(toolport::util::state_path("registry"), "/home/ann/.local/state/toolport/registry");
    ::unsetenv("XDG_STATE_HOME");
    ::setenv("HOME", "", 1);
    EXPECT_EQ(toolport::util::state_path("audit.jsonl"), "");
    ::setenv("XDG_STATE_HOME", saved_state.c_str(), 1);
    ::setenv("HOME", saved_home.c_str(), 1);
}
