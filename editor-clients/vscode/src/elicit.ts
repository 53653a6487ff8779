// An MCP server's question to the user: the server's agent/elicit (docs/protocol.md), one
// quick input per field (its default pre-filled) or a pick for choices and yes/no. The words
// are the server's; values go back as typed, and the server converts them.
export const ELICIT = 'agent/elicit';

/** What the extension tells the server it answers, in `capabilities.experimental.agentls`. */
export const ELICIT_CAPABILITIES = { elicit: true };

export interface ElicitField {
  name: string;
  title: string;
  description: string;
  type: string;
  choices: string[] | null;
  default: unknown;
  required: boolean;
}

export interface ElicitParams {
  server: string;
  prompt: string;
  message: string;
  fields: ElicitField[];
}

/** The two questions a form needs, behind an interface the unit tests replace. */
export interface FormApi {
  input(title: string, prompt: string, value: string): Thenable<string | undefined>;
  pick(title: string, prompt: string, items: string[]): Thenable<string | undefined>;
}

function shown(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'boolean') {
    return value ? 'yes' : 'no';
  }
  return String(value);
}

/** Each field asked in turn; a dismissed one cancels the form (null). */
export async function answerElicit(
  api: FormApi,
  transcript: { line(text: string): void },
  params: ElicitParams,
): Promise<{ action: string; content: Record<string, string> } | null> {
  const title = `${params.prompt}: ${params.message}`;
  const content: Record<string, string> = {};
  for (const field of params.fields) {
    const about = field.description ? ` — ${field.description}` : '';
    const label = field.title + (field.required ? ' (required)' : '') + about;
    const choices = field.type === 'boolean' ? ['yes', 'no'] : field.choices;
    const value = choices
      ? await api.pick(title, label, choices)
      : await api.input(title, label, shown(field.default));
    if (value === undefined) {
      transcript.line(`  ? ${params.server} asked: dismissed`);
      return null;
    }
    if (value !== '') {
      content[field.name] = value;
    }
  }
  transcript.line(`  ? ${params.server} asked: answered`);
  return { action: 'accept', content };
}
