// Splits a command line into words the way a POSIX shell would, without running a shell:
// `toolport list --stdio 'npx -y "@scope/server" --root ./data'` starts the program with
// exactly these arguments, and nothing in the string is ever interpreted by /bin/sh.
//
//   blanks (space, tab, newline) separate words;
//   'single quotes' keep everything literally;
//   "double quotes" keep everything except \" \\ \$ \` and backslash-newline;
//   a backslash outside quotes keeps the next character (backslash-newline joins lines);
//   '' and "" make an empty word.
//
// What a shell would do but we do not (variables, command substitution, pipes,
// redirection, lists, subshells, comments) is refused when unquoted: $ ` | & ; < > ( )
// and a # that starts a word. Quote them to pass them literally. ~ and globs (* ? [)
// are passed as they are.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::client {

// Throws std::invalid_argument naming the problem and its position (1-based).
std::vector<std::string> split_shell_words(std::string_view text);

}  // namespace toolport::client
