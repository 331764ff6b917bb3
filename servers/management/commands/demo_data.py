"""Create the demo servers and personas (idempotent). Other apps add their demo content through
`servers.demo.DEMO_DATA`."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from core.actors import DEMO
from servers.demo import DEMO_DATA
from servers.models import Role
from servers.services import membership_set, server_ensure

DEMO_PASSWORD = "tavern-demo"
PERSONAS = [
    ("alice", 1001, Role.ADMIN),
    ("bob", 1001, Role.MODERATOR),
    ("carol", 1001, Role.SUPPORT),
    ("charlie", 2002, Role.ADMIN),
]


class Command(BaseCommand):
    help = "Create two demo servers and the personas alice, bob, carol and charlie (password: tavern-demo)."

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        with transaction.atomic():
            lantern = server_ensure(server_id=1001, name="The Lantern Guild", by=DEMO)
            server_ensure(server_id=2002, name="Harbor Hall", by=DEMO)
            for username, server_id, role in PERSONAS:
                user, created = User.objects.get_or_create(username=username)
                if created:
                    user.set_password(DEMO_PASSWORD)
                    user.save()
                membership_set(
                    server=server_ensure(server_id=server_id, by=DEMO), user=user, role=role, by=DEMO
                )
            if not User.objects.filter(username="admin").exists():
                User.objects.create_superuser("admin", "admin@example.invalid", DEMO_PASSWORD)
        for populate in DEMO_DATA:
            populate(lantern)
        self.stdout.write(
            "Demo data ready. Sign in as alice (admin), bob (moderator), carol (support) or charlie "
            f"(another server), or as the superuser admin; every password is '{DEMO_PASSWORD}'."
        )
