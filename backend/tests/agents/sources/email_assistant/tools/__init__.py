from email_assistant.tools.base import get_tools, get_tools_by_name
from email_assistant.tools.default.email_tools import write_email, triage_email, Done
from email_assistant.tools.default.calendar_tools import schedule_meeting, check_calendar_availability

__all__ = [
    "get_tools",
    "get_tools_by_name",
    "write_email",
    "triage_email",
    "Done",
    "schedule_meeting",
    "check_calendar_availability",
]