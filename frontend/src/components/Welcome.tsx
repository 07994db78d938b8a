// The empty conversation: example prompts, and the model picker when there is more than one profile.
import type { Profile } from '../lib/api';

const EXAMPLES = ['calculate (17 * 23) + 4', 'What time is it in Asia/Tokyo?', 'count to 20', 'think about tide pools'];

type Props = {
  profiles: Profile[];
  profileId: string | null;
  onPickProfile: (id: string) => void;
  onSend: (text: string) => void;
};

export function Welcome({ profiles, profileId, onPickProfile, onSend }: Props) {
  return (
    <div className="welcome">
      <h1>How can I help?</h1>
      <p className="muted">Ask anything, or start with one of these:</p>
      <ul className="examples" aria-label="Example prompts">
        {EXAMPLES.map((example) => (
          <li key={example}>
            <button type="button" className="chip" data-testid="example-prompt" onClick={() => onSend(example)}>
              {example}
            </button>
          </li>
        ))}
      </ul>
      {profiles.length > 1 && (
        <label className="model-picker">
          Model{' '}
          <select
            data-testid="model-picker"
            value={profileId ?? profiles.find((profile) => profile.default)?.id}
            onChange={(event) => onPickProfile(event.target.value)}
          >
            {profiles.map((profile) => (
              <option key={profile.id} value={profile.id}>
                {profile.label}
              </option>
            ))}
          </select>
        </label>
      )}
    </div>
  );
}
