BaJ
Wöàf&wt