// Above a conversation: the agent and the model its next message goes to, and its read-only link.
import { useEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { useTopBarSlot } from '../hooks/useTopBar';
import { copyText } from '../lib/clipboard';
import { type Agent, describeError, type Profile, type Share, shareConversation, shareOf, stopSharing } from '../lib/api';

type Props = {
  conversationId: string;
  started: boolean; // the conversation has messages: it can be shared
  profiles: Profile[];
  profileId: string; // the profile the next message goes to
  onPickProfile: (id: string) => void;
  agents: Agent[];
  agentId: string; // the agent the conversation goes to
  onPickAgent?: (id: string) => void; // only a new conversation picks one
};

export function ChatHeader(props: Props) {
  const { conversationId, started, profiles, profileId, onPickProfile } = props;
  const [sharing, setSharing] = useState(false);
  const topBar = useTopBarSlot();
  if (profiles.length <= 1 && props.agents.length <= 1 && !started) return null; // nothing to pick or share yet
  const header = (
    <div className="chat-header">
      <AgentChoice agents={props.agents} agentId={props.agentId} onPick={props.onPickAgent} />
      {profiles.length > 1 && (
        <label className="model-picker">
          <span className="picker-label">Model</span>
          <select data-testid="model-picker" aria-label="Model" value={profileId} onChange={(event) => onPickProfile(event.target.value)}>
            {profiles.map((profile) => (
              <option key={profile.id} value={profile.id}>
                {profile.label}
              </option>
            ))}
          </select>
        </label>
      )}
      {started && (
        <button type="button" className="share-button" data-testid="share" onClick={() => setSharing(true)}>
          Share
        </button>
      )}
      {sharing && <ShareDialog conversationId={conversationId} onClose={() => setSharing(false)} />}
    </div>
  );
  return topBar ? createPortal(header, topBar) : header;
}

/** Of several agents: a new conversation picks one, a started one names the one it keeps. */
function AgentChoice({ agents, agentId, onPick }: { agents: Agent[]; agentId: string; onPick?: (id: string) => void }) {
  if (agents.length <= 1) return null;
  const agent = agents.find((candidate) => candidate.id === agentId);
  if (!onPick) {
    return (
      <span className="agent-name" data-testid="agent-name" title={agent?.description || undefined}>
        {agent?.name ?? agentId}
      </span>
    );
  }
  return (
    <label className="model-picker">
      <span className="picker-label">Agent</span>
      <select data-testid="agent-picker" aria-label="Agent" value={agentId} onChange={(event) => onPick(event.target.value)}>
        {agents.map((candidate) => (
          <option key={candidate.id} value={candidate.id} title={candidate.description || undefined}>
            {candidate.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The link: made (or brought up to date) on opening, copied with a click, and revocable. */
function ShareDialog({ conversationId, onClose }: { conversationId: string; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [share, setShare] = useState<Share | null>(null);
  const [status, setStatus] = useState<string>('');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    dialog.current?.showModal();
    shareOf(conversationId).then(setShare, (failure: Error) => setError(describeError(failure)));
  }, [conversationId]);

  const link = share ? new URL(share.url, window.location.origin).href : '';
  const act = (work: () => Promise<void>) => {
    setError(null);
    work().catch((failure: Error) => setError(describeError(failure)));
  };

  return (
    <dialog ref={dialog} className="share-dialog" aria-labelledby="share-title" data-testid="share-dialog" onClose={onClose}>
      <h2 id="share-title">Share this conversation</h2>
      <p className="muted">
        Anyone with the link can read the conversation as it is now. They cannot continue it, and they do not see
        your ratings. Messages you send later are not shared until you update the link.
      </p>
      {share ? (
        <>
          <label className="share-link">
            <span className="visually-hidden">Link</span>
            <input readOnly value={link} data-testid="share-link" onFocus={(event) => event.target.select()} />
          </label>
          <div className="share-actions">
            <button
              type="button"
              className="primary"
              data-testid="copy-link"
              onClick={() => act(async () => {
                setStatus((await copyText(link)) ? 'Link copied.' : 'Could not copy: select the link and copy it.');
              })}
            >
              Copy link
            </button>
            <button
              type="button"
              data-testid="update-link"
              onClick={() => act(async () => {
                setShare(await shareConversation(conversationId));
                setStatus('The link now shows the conversation as it is.');
              })}
            >
              Update
            </button>
            <button
              type="button"
              className="danger"
              data-testid="stop-sharing"
              onClick={() => act(async () => {
                await stopSharing(conversationId);
                setShare(null);
                setStatus('The link no longer works.');
              })}
            >
              Stop sharing
            </button>
          </div>
        </>
      ) : (
        <div className="share-actions">
          <button
            type="button"
            className="primary"
            data-testid="create-link"
            onClick={() => act(async () => {
              setShare(await shareConversation(conversationId));
              setStatus('Link created.');
            })}
          >
            Create link
          </button>
        </div>
      )}
      <p role="status" className="muted" data-testid="share-status">
        {status}
      </p>
      {error && (
        <p role="alert" className="rating-error">
          {error}
        </p>
      )}
      <div className="share-actions">
        <button type="button" data-testid="close-share" onClick={() => dialog.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}
