/**
 * The Snowball English ("Porter2") stemmer, which MongoDB's text search uses for English
 * (https://snowballstem.org/algorithms/english/stemmer.html), written from the algorithm's description. Input is a
 * lower-cased word; output its stem ("running" → "run", "conversations" → "convers").
 */

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u', 'y']);
const isVowel = (w: string, i: number) => VOWELS.has(w[i]);
const DOUBLES = ['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt'];
const LI_ENDINGS = new Set(['c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't']);

const EXCEPTIONS: Record<string, string> = {
  skis: 'ski', skies: 'sky', dying: 'die', lying: 'lie', tying: 'tie', idly: 'idl', gently: 'gentl', ugly: 'ugli',
  early: 'earli', only: 'onli', singly: 'singl', sky: 'sky', news: 'news', howe: 'howe', atlas: 'atlas',
  cosmos: 'cosmos', bias: 'bias', andes: 'andes',
};
const AFTER_1A = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);

/** Start of the region after the first non-vowel that follows a vowel, from `from`. */
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) if (!isVowel(w, i) && isVowel(w, i - 1)) return i + 1;
  return w.length;
}

/** Whether the word ends with a short syllable. */
function endsShort(w: string): boolean {
  const n = w.length;
  if (n === 2) return isVowel(w, 0) && !isVowel(w, 1);
  return n >= 3 && !isVowel(w, n - 3) && isVowel(w, n - 2) && !isVowel(w, n - 1) && !'wxY'.includes(w[n - 1]);
}

/** The longest of `suffixes` that `w` ends with. */
const longest = (w: string, suffixes: string[]) => suffixes.filter((s) => w.endsWith(s)).sort((a, b) => b.length - a.length)[0];

const STEP2: Record<string, string> = {
  tional: 'tion', enci: 'ence', anci: 'ance', abli: 'able', entli: 'ent', izer: 'ize', ization: 'ize', ational: 'ate',
  ation: 'ate', ator: 'ate', alism: 'al', aliti: 'al', alli: 'al', fulness: 'ful', ousli: 'ous', ousness: 'ous',
  iveness: 'ive', iviti: 'ive', biliti: 'ble', bli: 'ble', ogi: 'og', fulli: 'ful', lessli: 'less', li: '',
};
const STEP3: Record<string, string> = { tional: 'tion', ational: 'ate', alize: 'al', icate: 'ic', iciti: 'ic', ical: 'ic', ful: '', ness: '', ative: '' };
const STEP4 = ['al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ism', 'ate', 'iti', 'ous', 'ive', 'ize', 'ion'];

export function stem(word: string): string {
  if (word.length <= 2) return word;
  if (word in EXCEPTIONS) return EXCEPTIONS[word];
  let w = word.startsWith("'") ? word.slice(1) : word;
  // y at the start or after a vowel is a consonant: marked Y until the end.
  w = w.replace(/^y/, 'Y').replace(/([aeiouy])y/g, '$1Y');
  const r1 = /^(gener|commun|arsen)/.test(w) ? w.match(/^(gener|commun|arsen)/)![0].length : regionAfter(w, 0);
  const r2 = regionAfter(w, r1);
  const inR1 = (suffix: string) => w.length - suffix.length >= r1;
  const inR2 = (suffix: string) => w.length - suffix.length >= r2;

  // Step 0: possessives.
  const s0 = longest(w, ["'s'", "'s", "'"]);
  if (s0) w = w.slice(0, -s0.length);

  // Step 1a: plurals.
  const s1a = longest(w, ['sses', 'ied', 'ies', 'us', 'ss', 's']);
  if (s1a === 'sses') w = w.slice(0, -2);
  else if (s1a === 'ied' || s1a === 'ies') w = w.slice(0, -3) + (w.length > 4 ? 'i' : 'ie');
  else if (s1a === 's' && /[aeiouy]/.test(w.slice(0, -2))) w = w.slice(0, -1);
  if (AFTER_1A.has(w)) return w;

  // Step 1b: -ed, -ing.
  const s1b = longest(w, ['eed', 'eedly', 'ed', 'edly', 'ing', 'ingly']);
  if (s1b === 'eed' || s1b === 'eedly') {
    if (inR1(s1b)) w = w.slice(0, -s1b.length) + 'ee';
  } else if (s1b) {
    const stemPart = w.slice(0, -s1b.length);
    if (/[aeiouy]/.test(stemPart)) {
      w = stemPart;
      if (/(at|bl|iz)$/.test(w)) w += 'e';
      else if (DOUBLES.some((d) => w.endsWith(d))) w = w.slice(0, -1);
      else if (endsShort(w) && r1 >= w.length) w += 'e';
    }
  }

  // Step 1c: y after a consonant (not the first letter) becomes i.
  if (w.length > 2 && /[yY]$/.test(w) && !isVowel(w, w.length - 2)) w = w.slice(0, -1) + 'i';

  // Step 2.
  const s2 = longest(w, Object.keys(STEP2));
  if (s2 && inR1(s2)) {
    const before = w[w.length - s2.length - 1];
    if (s2 === 'ogi') {
      if (before === 'l') w = w.slice(0, -3) + 'og';
    } else if (s2 === 'li') {
      if (LI_ENDINGS.has(before)) w = w.slice(0, -2);
    } else w = w.slice(0, -s2.length) + STEP2[s2];
  }

  // Step 3.
  const s3 = longest(w, Object.keys(STEP3));
  if (s3 && inR1(s3) && (s3 !== 'ative' || inR2(s3))) w = w.slice(0, -s3.length) + STEP3[s3];

  // Step 4.
  const s4 = longest(w, STEP4);
  if (s4 && inR2(s4)) {
    if (s4 !== 'ion') w = w.slice(0, -s4.length);
    else if (/[st]ion$/.test(w)) w = w.slice(0, -3);
  }

  // Step 5.
  if (w.endsWith('e')) {
    const rest = w.slice(0, -1);
    if (inR2('e') || (inR1('e') && !endsShort(rest))) w = rest;
  } else if (w.endsWith('ll') && inR2('l')) w = w.slice(0, -1);

  return w.replace(/Y/g, 'y');
}
