"""An application's own server actions, registered with CHAT_ACTIONS=app_actions:ACTIONS in the tests."""

from __future__ import annotations

from threadline.agent.actions import Action, ActionCall, ActionResult, Outcome

APPLIED: list[ActionCall] = []


async def apply_schema(call: ActionCall) -> Outcome:
    APPLIED.append(call)
    return ActionResult(result={"schemaId": call.data["schema_id"], "applied": True}, message="Schema applied.")


async def explode(call: ActionCall) -> Outcome:
    raise RuntimeError("secret internals")


ACTIONS = [
    Action(
        "apply_schema",
        "Apply the schema the answer proposed.",
        schema={
            "type": "object",
            "properties": {"schema_id": {"type": "integer"}},
            "required": ["schema_id"],
            "additionalProperties": False,
        },
        run=apply_schema,
        free_form=True,  # the page's form sends any schema id: the answer does not suggest each one
    ),
    Action("explode", "Fails, to show how a failing action looks.", run=explode, free_form=True),
]
