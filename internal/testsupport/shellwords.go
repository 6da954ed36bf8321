package testsupport

// ShellWords splits a command line as a POSIX shell would for the quoting the READMEs use:
// blanks between words, single quotes around text taken as it is. ok is false when a quote
// is not closed.
func ShellWords(line string) (words []string, ok bool) {
	var cur []rune
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur = append(cur, r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, string(cur))
				cur = cur[:0]
				inWord = false
			}
		default:
			cur = append(cur, r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, string(cur))
	}
	return words, !quoted
}
