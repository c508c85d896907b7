import { ContactView } from '../contacts/contact.view.js';

/** The answer of a merge: the merge's id (what undoes it) and the target as the merge left it. */
export class ContactMergeView {
  /** @example 6650f0c2a1b2c3d4e5f6071b */
  mergeId: string;
  contact: ContactView;
}

/** The answer of an undo: the target as the undo left it, and each source back with its own values. */
export class ContactMergeUndoneView {
  /** @example 6650f0c2a1b2c3d4e5f6071b */
  mergeId: string;
  contact: ContactView;
  sources: ContactView[];
}
