// placeholder: replaced by the StableHLO lexer
