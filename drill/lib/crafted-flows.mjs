// The worst keyword triggers the limits allow (contract section 18): 100 active flows of 50 keywords of up to 100
// characters each, none of which matches, against a message of up to 2 048 characters that holds every word of
// every keyword as a whole word (which a filter on words lets through). Two kinds:
// - "lengths": keywords "a a ... a b a ... a" of every length against "a a a ... a b": each starts like most of the
//   message's runs of tokens and has a length of its own to try there, yet none matches (the only "b" is last);
// - "boundaries": keywords "a bxa bxa ... b" against "b bx bxa a xa bxa bxa ...": each is found hundreds of times
//   as a substring, always inside longer words, so a substring search finds it and must then refuse it each time.

export const CRAFTED_FLOWS = 100;
export const KEYWORDS_PER_FLOW = 50;

function lengthsKeywords(flow) {
  const keywords = [];
  for (let k = 0; k < KEYWORDS_PER_FLOW; k += 1) {
    const index = flow * KEYWORDS_PER_FLOW + k;
    const words = 3 + (index % 48); // 3..50 words, 5..99 characters
    const before = 1 + (Math.floor(index / 48) % (words - 2)); // at least one "a" on either side of the "b"
    keywords.push([...Array(before).fill('a'), 'b', ...Array(words - before - 1).fill('a')].join(' '));
  }
  return keywords;
}

function boundariesKeywords() {
  const keywords = [];
  for (let repeats = 0; keywords.length < KEYWORDS_PER_FLOW; repeats += 1) {
    for (const tail of ['b', 'bx']) keywords.push(`a ${'bxa '.repeat(repeats)}${tail}`);
  }
  return keywords.slice(0, KEYWORDS_PER_FLOW).filter((keyword) => keyword.length <= 100);
}

export const CRAFTED = {
  lengths: { message: `${'a '.repeat(1022)}b`, keywords: lengthsKeywords },
  boundaries: { message: `b bx bxa a x${"a bx".repeat(508)}`, keywords: boundariesKeywords },
};
