// Kernel IR text form: the parser of what print(const Kernel &) writes.
//
// print(parse_kernel(print(k))) == print(k) for every kernel k the factories can build; the
// parsed kernel is the same IR as k up to Block wrapping (a body of one statement and a Block
// holding only that statement print alike). Grammar summary (docs/ARCHITECTURE.md has more):
//
//   file    := kernel*                               ('//' comments, e.g. '// -----', skipped)
//   kernel  := 'kernel' name 'workgroup' '(' N ',' N ',' N ')' 'push_constants' N
//              ('buffer' 'b'I name ':' type 'readonly'? 'writeonly'?)*
//              ('shared' 's'I name ':' type '[' N ']')*  '{' stmt* '}'
//   stmt    := 'for' '(' decl ',' expr ',' expr ')' '{' stmt* '}'
//            | 'if' '(' expr ')' '{' stmt* '}' ('else' '{' stmt* '}')?
//            | 'let' decl '=' expr stmt*             (body: the rest of the enclosing braces)
//            | 'let' '(' decl '=' expr ')' '{' stmt* '}'
//            | 'var' decl '=' expr  | 'barrier' '(' ')'  | '{' stmt* '}'   (a nested Block)
//            | 'b'I '[' expr ']' '=' expr  | 's'I '[' expr ']' '=' expr  | ref '=' expr
//            | 'vstore' '<' vtype '>' '(' 'b'I ',' expr ',' expr ')'
//            | 'coopmat_store' '<' margs '>' '(' ('b'I | 's'I) ',' expr ',' expr ',' layout ','
//              expr ')'
//   decl    := name ':' vtype
//   vtype   := type | type 'x' ('2'|'3'|'4')  (f32x4) | 'coopmat' '<' margs '>'
//   margs   := type ',' ROWS 'x' COLS ',' ('a' | 'b' | 'accumulator');  layout := row_major |
//              col_major
//   expr    := literal | ref | 'b'I (':' type)? '[' expr ']' | 's'I (':' type)? '[' expr ']'
//            | 'pc' '[' N ']' | builtin | '(' expr op expr ')' | '!' expr
//            | vtype '(' expr ')' | (intrinsic | 'min' | 'max' | 'pow' | 'select') '(' args ')'
//            | 'vload' '<' vtype '>' '(' 'b'I ',' expr ')' | 'broadcast' '<' vtype '>' '(' expr ')'
//            | 'extract_lane' '<' type '>' '(' expr ',' N ')' | 'make_vector' '<' vtype '>' '(' args ')'
//            | 'subgroup_reduce' '<' ('add'|'mul'|'min'|'max') ',' vtype '>' '(' expr ')'
//            | 'subgroup_broadcast_first' '<' vtype '>' '(' expr ')'
//            | ('subgroup_broadcast' | 'subgroup_shuffle' | 'subgroup_shuffle_xor') '<' vtype '>'
//              '(' expr ',' expr ')'
//            | 'coopmat_load' '<' margs '>' '(' ('b'I | 's'I) ',' expr ',' expr ',' layout ')'
//            | ('coopmat_muladd' | 'coopmat_fill' | 'coopmat_scale' | 'coopmat_length')
//              '<' margs '>' '(' args ')'         (the <...> is the node's own type)
//   ref     := name (':' vtype)?   (the type may be left out where the name's binding gives it)
//   literal := true | false | INT (i32) | INT 'u' (u32) | FLOAT 'f' (f32) | FLOAT (f64, with
//              '.' or 'e') | (INT | FLOAT | inf | -inf | nan) ':' type
//   name    := [A-Za-z_][A-Za-z0-9_.]* (not a keyword, type, intrinsic, builtin, bI or sI)
//            | '"' string '"'
// Errors are "file:line:col: message". Ill-typed text is refused before any node factory can
// assert; a kernel that parses may still fail kir::verify (scoping, buffer permissions...).
#pragma once

#include "kir/kir.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::kir {

// Parses exactly one kernel.
Result<Kernel> parse_kernel(std::string_view text, std::string_view filename);
// Parses every kernel of `text` (none is an empty list).
Result<std::vector<Kernel>> parse_kernels(std::string_view text, std::string_view filename);

// Prints `k`, parses the text back and prints that: an error describing the first difference
// (or the parse error) when the two texts differ.
Status check_round_trip(const Kernel &k);

// `name` as the text form writes it: bare when it is a plain identifier that is not a reserved
// word of the text form, else quoted.
std::string format_name(std::string_view name);
// Whether `word` has a fixed meaning in the text form (keywords, types, intrinsics, builtins,
// bI / sI references), so that a name spelled so must be quoted.
bool is_reserved_word(std::string_view word);
// A kernel, buffer or shared-array name as the text form writes it: bare when it is a plain
// identifier (reserved words included: the position tells), else quoted.
std::string format_label(std::string_view name);

} // namespace kiln::kir
