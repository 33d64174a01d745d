# Helpers of the bench scripts (source it: `. "$(dirname "$0")/../lib.sh"`).

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# $1 / $2 as a ratio: 1.23x.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
