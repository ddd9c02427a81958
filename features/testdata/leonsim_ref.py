#!/usr/bin/env python3
"""Reference for the leonsim profile: the default pipeline of the Python
simhash package (https://github.com/1e0ng/simhash, simhash/__init__.py,
class Simhash with f=64, reg=r'[\\w\\u4e00-\\u9fcc]+', hashfunc=md5),
re-implemented in a few lines because the package itself cannot be installed
here. It prints leonsim_golden.json, the golden vectors leonsim_test.go checks.

    python3 features/testdata/leonsim_ref.py > features/testdata/leonsim_golden.json
"""
import hashlib
import json
import re
from itertools import groupby

REG = r'[\w\u4e00-\u9fcc]+'


def _hash(x):
    # Simhash's default hashfunc: the md5 digest; build_by_features keeps
    # its last f/8 bytes, read big-endian.
    return int.from_bytes(hashlib.md5(x).digest()[-8:], 'big')


def _slide(content, width=4):
    return [content[i:i + width] for i in range(max(len(content) - width + 1, 1))]


def _tokenize(content):
    content = content.lower()
    content = ''.join(re.findall(REG, content))
    return _slide(content)


def build_by_features(features, f=64):
    # Equivalent to the package's batched numpy form: bit i set when the
    # weighted count of features with bit i set exceeds half the total weight.
    ones = [0] * f
    total = 0
    for feat, w in features:
        h = _hash(feat.encode('utf-8'))
        total += w
        for i in range(f):
            if h >> i & 1:
                ones[i] += w
    return sum(1 << i for i in range(f) if ones[i] > total / 2)


def build_by_text(content):
    features = _tokenize(content)
    features = {k: sum(1 for _ in g) for k, g in groupby(sorted(features))}
    return build_by_features(features.items())


TEXTS = [
    "",
    "   ",
    "a",
    "abc",
    "abcd",
    "How are you? I am fine. Thanks.",
    "How are u? I am fine.     Thanks.",
    "This is a test string for testing",
    "This is a test string for testing also",
    "the cat sat on the mat",
    "你好，世界！这是一个测试。",
    "中华人民共和国刑法 第一条 为了惩罚犯罪，保护人民，根据宪法，结合我国同犯罪作斗争的具体经验及实际情况，制定本法。",
    "Mixed 中文 and English_words 123 ½ ² Ⅻ",
    "ΟΔΟΣ ΟΔΟΣ. Σ ΑΣ Α'Σ",
    "İstanbul ǅemal ß ﬁ Ａｂｃ",
    "naïve café résumé ñ e\u0301",
    "tab\tnewline\nnull\x00end",
    "snake_case_name __init__ x_1",
    "emoji 😀👍 and symbols ©®™ €100 ¥2,000.50",
    "한국어 텍스트 입니다 ﾊﾝｶｸ",
    "हिन्दी पाठ नमस्ते",
    "العربية نص ١٢٣",
    "ΣΊΣΥΦΟΣ Σ. ΟΔΥΣΣΕΎΣ's ΑΣ",
    "Ⅻ ⅻ ① ⑽ ² ½ ٣ ๓",
    "MiXeD CaSe ǅ ǈ ǋ ǲ ẞ",
    "The quick brown fox jumps over the lazy dog. " * 20,
]


def main():
    out = {
        "features": [
            {"features": [["aaa", 1], ["bbb", 1]], "value": str(build_by_features([("aaa", 1), ("bbb", 1)]))},
            {"features": [[str(i), 1] for i in range(500)], "value": str(build_by_features([(str(i), 1) for i in range(500)]))},
        ],
        "texts": [
            {"text": t, "value": str(build_by_text(t)), "windows": _tokenize(t)} for t in TEXTS
        ],
    }
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == '__main__':
    main()
