package features

import "strings"

// chineseStopwords are high-frequency Chinese function words that carry no
// topic: particles, auxiliaries, pronouns, conjunctions, prepositions, common
// adverbs and the copula, a short core of the usual Chinese stopword lists
// (the HIT and Baidu lists, and the stop_word list of jieba/gse). Most are
// also dropped by ChinesePOSWeight through their tags; the list catches them
// when the tagger gives a content tag (是 and 有 are verbs) and serves
// tokenizers that do not tag.
const chineseStopwords = `
的 地 得 之 了 着 过 是 有 在 和 与 及 或 等 也 都 就 而 并 但 其 所 以 于 为
对 将 把 被 由 从 向 给 让 这 那 此 彼 该 各 每 个 些 不 没 没有 无 非 又 还 再
已 已经 曾 很 更 最 太 即 则 乃 且 若 如 如果 假如 因 因为 由于 所以 因此 但是
然而 而且 并且 或者 以及 还是 就是 只是 只有 不但 不仅 虽然 虽 尽管 即使 于是
然后 一个 一些 一种 这个 那个 这些 那些 这样 那样 这里 那里 这么 那么 什么
怎么 怎样 为什么 哪 哪里 谁 我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们
自己 大家 人家 啊 吧 呢 吗 嘛 哦 呀 哈 哎 唉 么 嗯 呵 哟 喂 之一 等等 什么样
`

// ChineseStopwords is the stopword set of the zh-words profile: the Chinese
// function words above plus EnglishStopwords, since Chinese text often
// carries English words (The iPhone → "the" goes). Safe for concurrent use.
var ChineseStopwords = NewStopSet(append(strings.Fields(chineseStopwords), EnglishStopwords.Words()...))
