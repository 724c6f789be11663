// The shell-style splitter behind `--stdio 'command args'`.
#include <gtest/gtest.h>

#include "client/shell_words.hpp"

using toolport::client::split_shell_words;
using Words = std::vector<std::string>;

namespace {

std::string error_of(std::string_view text) {
    try {
        split_shell_words(text);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(ShellWords, BlanksSeparateWords) {
    EXPECT_EQ(split_shell_words("npx -y  server"), (Words{"npx", "-y", "server"}));
    EXPECT_EQ(split_shell_words("  \ta\tb\n c  "), (Words{"a", "b", "c"}));
}

TEST(ShellWords, SingleQuotesKeepEverything) {
    EXPECT_EQ(split_shell_words("echo 'a b' 'x\"y' '$HOME' 'back\\slash'"),
              (Words{"echo", "a b", "x\"y", "$HOME", "back\\slash"}));
}

TEST(ShellWords, DoubleQuotesKeepAllButTheirEscapes) {
    EXPECT_EQ(split_shell_words(R"(run "a b" "say \"hi\"" "c:\dir" "\\" "\$5" "\`")"),
              (Words{"run", "a b", "say \"hi\"", "c:\\dir", "\\", "$5", "`"}));
}

TEST(ShellWords, BackslashOutsideQuotesEscapesOneCharacter) {
    EXPECT_EQ(split_shell_words(R"(a\ b c\'d \$x \|)"), (Words{"a b", "c'd", "$x", "|"}));
    EXPECT_EQ(split_shell_words("one \\\ntwo"), (Words{"one", "two"})) << "backslash-newline joins lines";
}

TEST(ShellWords, QuotesJoinWithNeighbours) {
    EXPECT_EQ(split_shell_words(R"(--root='/my dir'/sub "x"'y'z)"), (Words{"--root=/my dir/sub", "xyz"}));
}

TEST(ShellWords, EmptyQuotesMakeAnEmptyArgument) {
    EXPECT_EQ(split_shell_words("prog '' \"\" end"), (Words{"prog", "", "", "end"}));
}

TEST(ShellWords, GlobsTildesAndMidWordHashesPassAsTheyAre) {
    EXPECT_EQ(split_shell_words("ls *.txt ~/x a#b"), (Words{"ls", "*.txt", "~/x", "a#b"}));
}

TEST(ShellWords, UnterminatedQuotesAreErrors) {
    EXPECT_NE(error_of("echo 'oops").find("unterminated single quote at position 6"), std::string::npos);
    EXPECT_NE(error_of("echo \"oops").find("unterminated double quote at position 6"), std::string::npos);
    EXPECT_NE(error_of("echo \"a\\\"").find("unterminated double quote"), std::string::npos);
    EXPECT_NE(error_of("echo oops\\").find("backslash at the end"), std::string::npos);
}

TEST(ShellWords, ShellSyntaxIsRefusedNotSilentlyPassed) {
    for (const char* text : {"a | b", "a && b", "a; b", "a > out", "a < in", "(a)", "echo $HOME", "echo `id`",
                             "echo \"$HOME\"", "echo \"`id`\"", "a #comment"}) {
        std::string error = error_of(text);
        EXPECT_NE(error.find("not run by a shell"), std::string::npos) << text << " -> " << error;
    }
    EXPECT_NE(error_of("x | y").find("'|' at position 3"), std::string::npos);
}

TEST(ShellWords, EmptyCommandIsAnError) {
    EXPECT_EQ(error_of(""), "the command is empty");
    EXPECT_EQ(error_of("   \t"), "the command is empty");
}

}  // namespace
