import * as assert from 'assert';
import { isImageName, referencedImages } from '../../src/images';

function uri(path: string, scheme = 'file') {
  return { scheme, path, toString: () => `${scheme}://${path}` };
}

describe('images', () => {
  it('takes attached image files and pasted image data from chat references, in order', async () => {
    const pasted = { mimeType: 'image/png', data: async () => new Uint8Array([137, 80, 78, 71]) };
    const references = [
      { value: uri('/w/shot.png') },
      { value: uri('/w/app.py') }, // a file reference: the task's text names it
      { value: 'some text' },
      { value: pasted },
      { value: uri('/w/remote.png', 'vscode-remote') }, // the server could not read it
      { value: { mimeType: 'text/plain', data: async () => new Uint8Array() } },
    ];
    assert.deepStrictEqual(await referencedImages(references), [
      { uri: 'file:///w/shot.png' },
      { data: Buffer.from([137, 80, 78, 71]).toString('base64'), mimeType: 'image/png' },
    ]);
  });

  it('knows the image names the model takes', () => {
    assert.ok(isImageName('a/B.JPEG') && isImageName('x.webp') && !isImageName('x.svg'));
  });
});
