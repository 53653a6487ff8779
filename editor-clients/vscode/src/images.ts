// Images for agent.runTask's `images` (docs/protocol.md): from the Chat view's references
// (an attached image file is a Uri; a pasted one is binary data with a MIME type) and from
// Agent: Run Task's "attach image" option. No `vscode` import: the unit tests give plain
// objects, and a reference's value is typed `unknown` in the stable API anyway.

/** One of agent.runTask's images: a file the server reads, or data pasted. */
export type TaskImage = { uri: string } | { data: string; mimeType: string };

const IMAGE_FILE = /\.(png|jpe?g|gif|webp)$/i;

/** What a file name (or a URI's path) says: whether it is an image the model takes. */
export function isImageName(name: string): boolean {
  return IMAGE_FILE.test(name);
}

interface UriLike {
  scheme: string;
  path: string;
  toString(): string;
}

interface BinaryLike {
  mimeType: string;
  data(): Thenable<Uint8Array>;
}

function isUri(value: unknown): value is UriLike {
  const candidate = value as Partial<UriLike> | null;
  return typeof candidate?.scheme === 'string' && typeof candidate.path === 'string';
}

/** VS Code's ChatReferenceBinaryData (a pasted image), by its shape: it is not in the
 * stable API's types, but its objects reach a participant all the same. */
function isBinary(value: unknown): value is BinaryLike {
  const candidate = value as Partial<BinaryLike> | null;
  return typeof candidate?.mimeType === 'string' && typeof candidate.data === 'function';
}

/** The images among a chat request's references, in order; other references are left to
 * the task's text. A file must be on disk (the server reads it); data is sent as base64. */
export async function referencedImages(references: readonly { value: unknown }[]): Promise<TaskImage[]> {
  const images: TaskImage[] = [];
  for (const { value } of references) {
    if (isBinary(value) && value.mimeType.startsWith('image/')) {
      const bytes = await value.data();
      images.push({ data: Buffer.from(bytes).toString('base64'), mimeType: value.mimeType });
    } else if (isUri(value) && value.scheme === 'file' && isImageName(value.path)) {
      images.push({ uri: value.toString() });
    }
  }
  return images;
}
