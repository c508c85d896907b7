/**
 * A Map of at most `max` entries: setting a new key when it is full forgets the entry set longest ago (a
 * Map keeps insertion order; delete and set again to make an entry the newest). The process's memories of
 * recent work (caches, verified tokens, parsed numbers, logged event ids) stay bounded whatever the traffic.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
