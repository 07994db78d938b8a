// What the page says under a conversation, above the message box: a message that came back unsent, a note of
// the page's or the server's, that the agent's question, or a tool call, waits for the person, and how long a
// rate limit met before a reload still holds the next message back.
type Props = {
  unsentBack: boolean;
  warning: string | null;
  questionWaits: boolean;
  approvalWaits: boolean;
  waitLeft: number; // seconds; 0 when nothing holds the next message back
};

export function ChatNotices({ unsentBack, warning, questionWaits, approvalWaits, waitLeft }: Props) {
  return (
    <>
      {waitLeft > 0 && (
        <div className="notice" role="status" data-testid="rate-limited">
          Too many requests — you can send again in {waitLeft} s.
        </div>
      )}
      {unsentBack && !warning && (
        <div className="notice" role="status" data-testid="notice">
          Your last message was not sent: it is back in the message box.
        </div>
      )}
      {warning && (
        <div className="notice" role="status" data-testid="notice">
          {warning}
        </div>
      )}
      {questionWaits && (
        <div className="notice" role="status" data-testid="question-waits">
          The agent waits for your reply to its question above; a message sent here skips the question.
        </div>
      )}
      {approvalWaits && !questionWaits && (
        <div className="notice" role="status" data-testid="approval-waits">
          A tool call above waits for your approval; a message sent here declines it.
        </div>
      )}
    </>
  );
}
